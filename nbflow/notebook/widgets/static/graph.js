// nbflow graph view: draws the layout computed in Python (nbflow/notebook/graph_model.py).
// Pan by dragging, zoom with the wheel, click an op for its details, click a group to expand
// or collapse it, search by name. No network access: everything is in this file.
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs, parent) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function el(tag, attrs, parent, text) {
  const node = document.createElement(tag);
  Object.assign(node, attrs);
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

function render({ model, el: host }) {
  host.classList.add("nbflow-graph");
  const root = el("div", {}, host);
  root.style.cssText = "font:12px sans-serif;border:1px solid #ddd;border-radius:4px";
  const bar = el("div", {}, root);
  bar.style.cssText = "display:flex;gap:6px;align-items:center;padding:4px;background:#f6f8fa";
  const title = el("b", {}, bar);
  const search = el("input", { type: "search", placeholder: "search ops…" }, bar);
  const results = el("select", {}, bar);
  results.style.maxWidth = "260px";
  const colorBy = el("select", {}, bar);
  for (const v of ["device", "structure"]) el("option", { value: v }, colorBy, "colour: " + v);
  const fit = el("button", {}, bar, "fit");
  const body = el("div", {}, root);
  body.style.cssText = "display:flex";
  const canvas = svg("svg", { width: "100%", height: "480" }, body);
  canvas.style.cssText = "flex:1;cursor:grab;background:white";
  const defs = svg("defs", {}, canvas);
  const marker = svg("marker", { id: "nbf-arrow", viewBox: "0 0 10 10", refX: "10", refY: "5",
    markerWidth: "6", markerHeight: "6", orient: "auto-start-reverse" }, defs);
  svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#888" }, marker);
  const scene = svg("g", {}, canvas);
  const details = el("pre", {}, body);
  details.style.cssText = "width:300px;max-height:480px;overflow:auto;margin:0;padding:6px;" +
    "border-left:1px solid #ddd;white-space:pre-wrap;font-size:11px";
  let tx = 10, ty = 10, k = 1;
  const apply = () => scene.setAttribute("transform", `translate(${tx},${ty}) scale(${k})`);

  function draw() {
    const view = model.get("view") || { nodes: [], edges: [], aside: [] };
    title.textContent = model.get("title") || `${view.num_ops || 0} ops`;
    colorBy.value = model.get("color_by");
    scene.replaceChildren();
    const selected = model.get("selected");
    for (const e of view.edges) {
      const [[x1, y1], [x2, y2]] = e.points;
      svg("line", { x1, y1, x2, y2, stroke: "#888", "marker-end": "url(#nbf-arrow)",
        "stroke-width": String(Math.min(4, 1 + Math.log2(e.count))),
        "stroke-dasharray": e.control ? "4 3" : "" }, scene);
    }
    const groups = view.nodes.filter((n) => n.kind === "group" && n.expanded);
    const rest = view.nodes.filter((n) => !(n.kind === "group" && n.expanded));
    for (const n of [...groups, ...rest, ...view.aside]) {
      const g = svg("g", { transform: `translate(${n.x},${n.y})`, "data-id": n.id }, scene);
      g.style.cursor = "pointer";
      const isGroup = n.kind === "group";
      svg("rect", { width: n.w, height: n.h, rx: isGroup ? 8 : 4,
        fill: n.expanded ? "rgba(240,240,240,0.6)" : n.fill, "fill-opacity": n.expanded ? 1 : 0.85,
        stroke: n.id === selected ? "#d62728" : n.hl ? "#111" : n.identical !== null &&
          n.identical !== undefined ? "#6a51a3" : "#555",
        "stroke-width": n.id === selected || n.hl ? 3 : 1,
        "stroke-dasharray": n.identical !== null && n.identical !== undefined ? "5 2" : "" }, g);
      const label = isGroup ? `${n.expanded ? "−" : "+"} ${n.label} (${n.count})` : n.label;
      const t = svg("text", { x: 6, y: n.expanded ? 14 : n.h / 2 + 4 }, g);
      t.textContent = label.length > 22 && !n.expanded ? label.slice(0, 21) + "…" : label;
      const tip = svg("title", {}, g);
      tip.textContent = `${n.id}${n.op ? " (" + n.op + ")" : ""} ${n.device || ""}`;
      g.addEventListener("click", (ev) => {
        ev.stopPropagation();
        if (isGroup) model.send({ type: "toggle", id: n.id });
        else { model.set("selected", n.id); model.save_changes(); }
      });
    }
    if (view.aside.length) {
      const x = view.aside[0].x, t = svg("text", { x, y: -6, fill: "#666" }, scene);
      t.textContent = "bookkeeping (set aside)";
    }
  }

  function showDetails() {
    const d = model.get("details");
    if (!d || !d.name) { details.textContent = "click an op for details"; return; }
    const lines = [`${d.name}`, `op: ${d.op}`, `device: ${d.device}`];
    if (d.created) {
      const where = d.created.cell ? `cell '${d.created.cell}'` : d.created.file;
      lines.push(`created: ${where}, line ${d.created.line}`);
      if (d.created.source) lines.push(`  ${d.created.source}`);
    }
    lines.push("inputs:", ...d.inputs.map((i) => "  " + i));
    lines.push("outputs:", ...d.outputs.map((o) => `  ${o.name} ${o.dtype}${o.shape}`));
    const attrs = Object.entries(d.attrs || {});
    if (attrs.length) lines.push("attrs:", ...attrs.map(([a, v]) => `  ${a} = ${v}`));
    const values = Object.entries(d.values || {});
    if (values.length) lines.push("last run:", ...values.map(([a, v]) => `  ${a} = ${v}`));
    details.textContent = lines.join("\n");
  }

  function showResults() {
    results.replaceChildren();
    const hits = model.get("results") || [];
    el("option", { value: "" }, results, hits.length ? `${hits.length} matches` : "no matches");
    for (const h of hits) el("option", { value: h }, results, h);
  }

  search.addEventListener("input", () => { model.set("query", search.value); model.save_changes(); });
  results.addEventListener("change", () => {
    if (results.value) model.send({ type: "reveal", name: results.value });
  });
  colorBy.addEventListener("change", () => { model.set("color_by", colorBy.value); model.save_changes(); });
  fit.addEventListener("click", () => {
    const view = model.get("view"), w = canvas.clientWidth || 800;
    k = Math.min(2, w / Math.max(1, view.width + 20), 480 / Math.max(1, view.height + 20));
    tx = 10; ty = 10; apply();
  });
  let drag = null;
  canvas.addEventListener("pointerdown", (ev) => { drag = [ev.clientX - tx, ev.clientY - ty]; });
  canvas.addEventListener("pointermove", (ev) => {
    if (drag) { tx = ev.clientX - drag[0]; ty = ev.clientY - drag[1]; apply(); }
  });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("pointerleave", () => { drag = null; });
  canvas.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = canvas.getBoundingClientRect(), mx = ev.clientX - r.left, my = ev.clientY - r.top;
    const f = ev.deltaY < 0 ? 1.15 : 1 / 1.15;
    tx = mx - (mx - tx) * f; ty = my - (my - ty) * f; k *= f; apply();
  }, { passive: false });
  model.on("change:view", draw);
  model.on("change:selected", draw);
  model.on("change:details", showDetails);
  model.on("change:results", showResults);
  draw(); showDetails(); showResults(); apply();
}

export default { render };
