const scrolls = new Map();

function codePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(":scope > .ce-view");
  if (!root) {
    root = document.createElement("div");
    root.className = "ce-view";
    parentElement.appendChild(root);
  }
  const old = root.querySelector(".ce-text");
  if (old) scrolls.set(root.dataset.view, old.scrollTop);
  root.innerHTML = data.html;
  root.dataset.view = data.view;
  const box = root.querySelector(".ce-text");
  if (box) {
    box.scrollTop = scrolls.get(data.view) || 0;
    const sel = Array.from(box.querySelectorAll(".ce-sel"));
    if (sel.length) {
      const view = box.getBoundingClientRect();
      const seen = sel.some((el) => {
        const r = el.getBoundingClientRect();
        return r.bottom > view.top && r.top < view.bottom;
      });
      if (!seen) {
        const first = sel[0].getBoundingClientRect();
        box.scrollTop += first.top - view.top - 24;
      }
    }
  }

  // offsets of a selection boundary, from the data-o of the text it falls in (or the
  // nearest text after a start / before an end when it falls on a badge or between spans)
  function offsetOf(node, off, isStart) {
    if (node.nodeType === Node.TEXT_NODE) {
      const host = node.parentElement && node.parentElement.closest("[data-o]");
      if (host && root.contains(host)) return Number(host.dataset.o) + codePoints(node.data.slice(0, off));
    }
    const probe = document.createRange();
    probe.setStart(node, off);
    const spans = Array.from(root.querySelectorAll("[data-o]"));
    if (isStart) {
      for (const s of spans) if (probe.comparePoint(s, 0) >= 0) return Number(s.dataset.o);
      return null;
    }
    for (let i = spans.length - 1; i >= 0; i--) {
      const s = spans[i];
      if (probe.comparePoint(s, s.childNodes.length) <= 0) return Number(s.dataset.o) + codePoints(s.textContent);
    }
    return null;
  }

  root.onclick = (e) => {
    const sel = window.getSelection();
    if (sel && !sel.isCollapsed) return;
    const el = e.target.closest("[data-c]");
    if (!el || !data.pick) return;
    const cs = el.dataset.c.split(" ").map(Number);
    let pick = cs[0];
    const here = cs.indexOf(data.selected);
    if (cs.length > 1 && here >= 0) pick = cs[(here + 1) % cs.length];
    setTriggerValue("pick", pick);
  };
  root.onmouseup = () => {
    if (!data.select) return;
    setTimeout(() => {
      const sel = window.getSelection();
      if (!sel || sel.isCollapsed || !sel.rangeCount) return;
      const r = sel.getRangeAt(0);
      if (!root.contains(r.commonAncestorContainer)) return;
      const start = offsetOf(r.startContainer, r.startOffset, true);
      const end = offsetOf(r.endContainer, r.endOffset, false);
      if (start !== null && end !== null && end > start) setTriggerValue("select", { start, end });
    }, 0);
  };
}
