// dfir view: click a node to see its attributes and source line; expand a GE graph or a
// sub-FlowGraph into its own drawing; with a trace, a node's details list its times. The
// scene's data is the JSON in #dfir-scene.
(function () {
  "use strict";
  const scene = JSON.parse(document.getElementById("dfir-scene").textContent);
  const details = document.getElementById("details");
  const boxes = {};
  for (const diagram of Object.values(scene.diagrams)) Object.assign(boxes, diagram.boxes);

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function attributeList(attrs) {
    const list = element("dl", "attrs");
    for (const [name, value] of Object.entries(attrs)) {
      list.append(element("dt", "", name), element("dd", "", value));
    }
    return list;
  }

  function ms(value) {
    return value.toFixed(3) + " ms";
  }

  function durations(times) {
    return {"calls": String(times.calls), "total": ms(times.total_ms), "p50": ms(times.p50_ms),
            "p99": ms(times.p99_ms), "max": ms(times.max_ms)};
  }

  // A node's times from the trace: its node's, summed over instances, then a replica's own.
  function traceDetails(trace) {
    if (trace === null) return [element("p", "hint trace", "no slices in the trace")];
    const rows = {"share": (100 * trace.share).toFixed(1) + "% of all node time", ...durations(trace),
                  "instances": String(trace.instances)};
    const parts = [element("h4", "", "time in node"), attributeList(rows)];
    if (trace.instance === null) parts.push(element("p", "hint trace", "this instance: no slices in the trace"));
    if (trace.instance) {
      parts.push(element("h4", "", "this instance (" + trace.instance.index + ")"),
                 attributeList(durations(trace.instance)));
    }
    const section = element("div", "trace");
    section.append(...parts);
    return [section];
  }

  function expand(diagramId) {
    const section = document.getElementById(diagramId);
    section.hidden = false;
    section.classList.add("expanded");
    section.scrollIntoView({block: "nearest"});
  }

  function select(id) {
    document.querySelectorAll("g.node.selected").forEach(g => g.classList.remove("selected"));
    document.getElementById(id).classList.add("selected");
    const box = boxes[id];
    details.replaceChildren(element("h3", "", box.label), element("div", "kind", box.kind));
    if (box.loc) {
      details.append(element("div", "loc", box.loc));
      if (box.source) details.append(element("pre", "source", box.source));
    }
    for (const target of box.expands) {
      const button = element("button", "expand", "expand " + scene.diagrams[target].title);
      button.addEventListener("click", () => expand(target));
      details.append(button);
    }
    if ("trace" in box) details.append(...traceDetails(box.trace));
    details.append(attributeList(box.attrs));
  }

  document.querySelectorAll("svg g.node").forEach(g => {
    g.addEventListener("click", () => select(g.id));
    g.addEventListener("dblclick", () => boxes[g.id].expands.forEach(expand));
  });
  document.querySelectorAll("button.zoom").forEach(button => button.addEventListener("click", () => {
    const canvas = button.closest("section").querySelector(".canvas");
    canvas.classList.toggle("actual-size");
    button.textContent = canvas.classList.contains("actual-size") ? "fit" : "actual size";
  }));
  document.getElementById("find").addEventListener("input", event => {
    const text = event.target.value.trim().toLowerCase();
    document.querySelectorAll("svg g.node").forEach(g => {
      g.classList.toggle("found", text !== "" && boxes[g.id].label.toLowerCase().includes(text));
    });
  });
  document.querySelectorAll("button.collapse").forEach(button => button.addEventListener("click", () => {
    const section = button.closest("section");
    section.hidden = true;
    section.classList.remove("expanded");
  }));
})();
