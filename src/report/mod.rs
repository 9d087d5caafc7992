//! Reports rendered from finished results: JUnit XML, Markdown summary, HTML evidence report.
