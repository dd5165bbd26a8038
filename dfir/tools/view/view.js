// dfir view: click a node to see its attributes and source line; expand a GE graph or a
// sub-FlowGraph into its own drawing. The scene's data is the JSON in #dfir-scene.
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
