//! The report's one stylesheet, inline in every page sqsprobe writes — a run's report, the
//! matrix, an audit's report (no external asset): a change to how a thing looks is made once.

/// CSS for the page, its bars, the timelines and the calls tables.
pub(crate) const CSS: &str = "
body{font:14px/1.45 system-ui,sans-serif;margin:1.5rem auto;max-width:1060px;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.1rem;margin:1.2rem 0 .4rem}h3{font-size:1rem;margin:.3rem 0}
code{font:12px ui-monospace,monospace;background:#f3f4f6;padding:0 .2em;border-radius:3px}
p.target{font-size:15px;margin:.3rem 0}p.note{color:#59636e;margin:.2rem 0 .5rem}
dl.kv{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.15rem 1rem;margin:.5rem 0}dl.kv dt{color:#59636e}dl.kv dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;font:600 11px system-ui;padding:.1rem .45rem;border-radius:3px;color:#fff;vertical-align:middle}
.pass{background:#1a7f37}.known_divergence{background:#0969da}.inconclusive{background:#9a6700}.error{background:#cf222e}
.fail{background:#a40e26}.did_not_finish{background:#6e7781}.not_started{background:#afb8c1;color:#1f2328}.unsupported{background:#8250df}
.no_redelivery_within_window{background:#2da44e}.delivered{background:#54aeff}.observed_redelivery{background:#8250df}.other{background:#bf8700}.none{background:#d0d7de}.pooled{background:repeating-linear-gradient(45deg,#2da44e 0 4px,#8250df 4px 8px)}
.banner{background:#fff8c5;border:1px solid #d4a72c;padding:.4rem .7rem;border-radius:4px}
.bar-row{display:grid;grid-template-columns:11rem minmax(0,1fr);align-items:center;gap:.2rem 1rem;margin:.4rem 0}
.bar{display:flex;height:16px;border-radius:4px;overflow:hidden;background:#eaeef2}.bar .seg{min-width:3px}
.bar-legend{grid-column:2;list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:0 1rem;font-size:12px}
.sw{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 0;vertical-align:-1px}
p.legend{font-size:11px;color:#59636e;margin:.2rem 0 .6rem}p.legend>span{white-space:nowrap}p.legend .sw{margin-left:8px}
details.case{border:1px solid #d0d7de;border-radius:6px;margin:.35rem 0;padding:.25rem .7rem}
details.case>summary{cursor:pointer;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
details.case[open]>summary{white-space:normal}
details.case .why{color:#59636e}
details.suite{margin:.4rem 0}details.suite>summary{cursor:pointer;font-weight:600}
.case-body{padding:.2rem 0 .4rem;scroll-margin-top:2.2rem}
ul.findings li{color:#a40e26}
table{border-collapse:collapse;font-size:12px;margin:.5rem 0}th,td{border:1px solid #d0d7de;padding:.15rem .4rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right}
.calls-box{max-width:100%;overflow-x:auto}
table.calls{table-layout:fixed;width:100%}
table.calls td,table.calls th{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
table.calls tr.more td{white-space:normal;overflow-wrap:anywhere;color:#59636e;border-top:0}
table.calls tr.fail td{background:#ffebe9}table.calls tr.info td{background:#fff8c5}
table.calls tr.harness td{color:#6e7781}table.calls tr.harness-fail td{background:#ffebe9}
section.trials{margin:.5rem 0}
table.trials caption{text-align:left;font-weight:600;padding:.2rem 0}table.trials td{vertical-align:middle}table.trials td:nth-child(-n+3){white-space:nowrap}
table.trials .scale-note{font-weight:400;color:#59636e;font-size:11px;padding:0 .6rem}
svg.interval{display:block}svg.interval .scale{fill:#d0d7de}
svg.interval .allowed{fill:#2da44e;fill-opacity:.2}svg.interval .edge{fill:#1a7f37}
svg.interval .range{fill:#54aeff;fill-opacity:.85}svg.interval.holds .range{fill:#2da44e}
svg.interval.violated .range{fill:#cf222e}svg.interval.straddles .range{fill:#d4a72c}
svg.interval .rate{fill:#1f2328}
.bound-word.holds{color:#1a7f37}.bound-word.violated{color:#a40e26;font-weight:600}.bound-word.straddles{color:#9a6700;font-weight:600}
p.trial-strip{display:flex;flex-wrap:wrap;gap:4px;align-items:center;margin:.5rem 0}
p.trial-strip .strip-name{color:#59636e;font-size:12px;margin-right:.4rem}
p.trial-strip .strip-note{color:#59636e;font-size:11px;margin-left:.6rem}
a.trial{display:inline-block;min-width:20px;height:18px;line-height:18px;padding:0 2px;text-align:center;font:600 10px system-ui;color:#fff;text-decoration:none;border-radius:3px;box-sizing:border-box}
a.trial.none{color:#1f2328}a.trial.v-fail,a.trial.v-error{outline:2px solid #a40e26;outline-offset:1px}
a.trial.v-inconclusive{outline:2px dashed #9a6700;outline-offset:1px}
a.trial.v-did_not_finish{background:#fff;color:#6e7781;border:1px dashed #6e7781}
details.trial{border-left:3px solid #d0d7de;margin:.2rem 0;padding:.1rem .6rem}details.trial>summary{cursor:pointer}
details.trial .why{color:#59636e}
figure.timeline{margin:.6rem 0;max-width:100%;overflow-x:auto}
svg.timeline{display:block;width:100%;height:auto;min-width:640px}
svg.timeline text{font:10px system-ui,sans-serif;fill:#1f2328}
svg.timeline .lane{fill:#fff}svg.timeline .lane.odd{fill:#f6f8fa}
svg.timeline .lane-name{font-weight:600;fill:#59636e}
svg.timeline .grid{stroke:#d0d7de;stroke-width:.6}svg.timeline .tick{fill:#59636e}
svg.timeline .window-guide{fill:#0969da;fill-opacity:.05}
.call.ok rect,.sw.ok{fill:#2da44e;background:#2da44e}
.call.fail rect,.sw.fail{fill:#cf222e;background:#cf222e}
.call.info rect{fill:#fff8c5;stroke:#bf8700;stroke-width:1.5;stroke-dasharray:3 2}.sw.info{background:#fff8c5;border:1px dashed #bf8700;box-sizing:border-box}
.call.retried rect{fill-opacity:.5}
.call.harness rect,.sw.harness{fill:#afb8c1;background:#afb8c1}
.call.harness-fail rect{stroke:#cf222e;stroke-width:1.5}
.call.harness text{fill:#6e7781}
.call.outside rect,.sw.outside{fill:#fb8500;background:#fb8500;stroke:#953800;stroke-width:1.5}
.call.outside text{fill:#953800;font-weight:600}
.call.finding-call rect{stroke:#a40e26;stroke-width:2}
.lease .held,.sw.held{fill:#0969da;background:#0969da}
.lease .extended,.sw.extended{fill:#54aeff;background:#54aeff}
.lease .kept{stroke:#953800;stroke-width:1.5;stroke-dasharray:3 3}.sw.kept{background:repeating-linear-gradient(90deg,#953800 0 3px,transparent 3px 6px);height:2px;vertical-align:3px}
.lease .lapse{stroke:#0550ae;stroke-width:2}.lease .ended{stroke:#1f2328;stroke-width:2}.lease .was{stroke:#0969da;stroke-width:1;stroke-dasharray:2 2}
.lease text{fill:#0550ae}
.step rect{fill:#eaeef2;stroke:#afb8c1;stroke-width:.6}
.step.sleep rect,.sw.sleep{fill:url(#sqsprobe-hatch);background:repeating-linear-gradient(45deg,#d0d7de 0 2px,#f6f8fa 2px 5px)}
.step.check-fail rect,.step.check-error rect{stroke:#cf222e;stroke-width:1}
.step.check-inconclusive rect{stroke:#9a6700;stroke-width:1}
.step.failed-step rect{fill:#ffebe9;stroke:#cf222e;stroke-width:2}
.window .band,.sw.window{fill:#0969da;fill-opacity:.12;background:#cfe3ff}
.window .planned{fill:none;stroke:#0969da;stroke-dasharray:4 3}
.window text{fill:#0550ae;font-weight:600}
.redelivery path,.sw.redelivery{fill:#8250df;background:#8250df}.redelivery text{fill:#6639ba;font-weight:600}
.sighting path{fill:#6e7781}
.finding path,.sw.finding{fill:#cf222e;background:#cf222e}.finding text{fill:#a40e26;font-weight:600}
.fault path,.sw.fault{fill:#bf3989;background:#bf3989;stroke:#fff;stroke-width:1}.fault text{fill:#99286e;font-weight:600}
ul.findings li.REPAIR{color:#a40e26}ul.findings li.HOLD{color:#9a6700}ul.findings li.RECONCILE{color:#8250df}ul.findings li{margin:.2rem 0}
pre.tail{background:#f6f8fa;border:1px solid #d0d7de;border-radius:4px;padding:.4rem .6rem;font:12px ui-monospace,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
svg.lanes text{font:11px ui-monospace,monospace;fill:#59636e}svg.lanes .lease{fill:#54aeff;fill-opacity:.35;stroke:#0969da;stroke-width:.5}
svg.lanes .ack{stroke:#1f2328;stroke-width:.5}svg.lanes .ok{fill:#2da44e}svg.lanes .repair{fill:#cf222e}svg.lanes .hold{fill:#bf8700}
svg.lanes .reconcile{fill:#8250df}svg.lanes line.grid{stroke:#eaeef2}svg.lanes text.tick{fill:#8c959f}
svg.lanes line.nemesis{stroke-width:1.5;stroke-dasharray:4 3}svg.lanes line.kill{stroke:#cf222e}svg.lanes line.restart{stroke:#2da44e}
svg.lanes rect.pause{fill:#6e7781;fill-opacity:.18;stroke:none}svg.lanes text.nemesis{font-weight:600}
";

/// Shared SVG definitions, written once at the top of the page: the sleep hatching.
pub(crate) const DEFS: &str = "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>\
<pattern id=\"sqsprobe-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">\
<rect width=\"6\" height=\"6\" fill=\"#f6f8fa\"/><rect width=\"2.5\" height=\"6\" fill=\"#c8d1da\"/></pattern></defs></svg>\n";
