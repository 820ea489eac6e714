const scrolls = new Map();

const NEXT = new Set(["j", "J", "n", "ArrowRight"]);
const PREVIOUS = new Set(["k", "K", "p", "ArrowLeft"]);

function codePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// bring the selected chunk into view: when moved by key, its start near the top unless it is
// already well inside the view; otherwise only when none of it shows
function showSelected(box, byKey) {
  const sel = Array.from(box.querySelectorAll(".ce-sel"));
  if (!sel.length) return;
  const view = box.getBoundingClientRect();
  const first = sel[0].getBoundingClientRect();
  if (byKey) {
    if (first.top < view.top || first.top > view.bottom - 60) box.scrollTop += first.top - view.top - 24;
    return;
  }
  const seen = sel.some((el) => {
    const r = el.getBoundingClientRect();
    return r.bottom > view.top && r.top < view.bottom;
  });
  if (!seen) box.scrollTop += first.top - view.top - 24;
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
  const hadFocus = root.contains(document.activeElement) || root.dataset.focus === "1";
  const byKey = root.dataset.pending !== undefined && root.dataset.pending !== "";
  // the selected chunk is brought into view only when it changed (or the view is new): a rerun
  // for something else (a text selection, say) left the reader where they had scrolled
  const moved = root.dataset.view !== data.view || root.dataset.selected !== String(data.selected);
  // keys pressed faster than the app answers: a render of an earlier step keeps the step still on
  // its way (cleared, every press after it counted from the earlier step and was lost)
  const caughtUp = Number(root.dataset.pending) === data.selected;
  if (caughtUp || Date.now() - Number(root.dataset.pendingAt || 0) > 1500) root.dataset.pending = "";
  root.innerHTML = data.html;
  root.dataset.view = data.view;
  root.dataset.selected = String(data.selected);
  const box = root.querySelector(".ce-text");
  if (box) {
    box.scrollTop = scrolls.get(data.view) || 0;
    if (moved || byKey) showSelected(box, byKey);
    if (data.count) {
      box.tabIndex = 0;
      box.setAttribute("role", "region");
      box.setAttribute("aria-label", "Document text: j or → for the next chunk, k or ← for the previous");
      box.onfocus = () => (root.dataset.focus = "1");
      box.onblur = () => (root.dataset.focus = "");
      if (hadFocus) box.focus({ preventScroll: true });
    }
  }

  root.onkeydown = (e) => {
    if (!data.count || !data.pick || e.ctrlKey || e.metaKey || e.altKey) return;
    const step = NEXT.has(e.key) ? 1 : PREVIOUS.has(e.key) ? -1 : 0;
    if (!step) return;
    e.preventDefault();
    const pending = root.dataset.pending;
    const base = pending !== undefined && pending !== "" ? Number(pending) : (data.selected ?? -1);
    const target = Math.min(Math.max(base + step, 0), data.count - 1);
    if (target === base) return;
    root.dataset.pending = String(target);
    root.dataset.pendingAt = String(Date.now());
    setTriggerValue("pick", target);
  };

  // offsets of a selection boundary, from the data-o of the text it falls in (or the
  // nearest text after a start / before an end when it falls on a badge or between spans)
  // code points of the text in ``host`` before ``node`` (a bidi control's sign splits a span's text)
  function textBefore(host, node) {
    let n = 0;
    const walk = document.createTreeWalker(host, NodeFilter.SHOW_TEXT);
    for (let t = walk.nextNode(); t && t !== node; t = walk.nextNode()) n += codePoints(t.data);
    return n;
  }

  function offsetOf(node, off, isStart) {
    if (node.nodeType === Node.TEXT_NODE) {
      const host = node.parentElement && node.parentElement.closest("[data-o]");
      if (host && root.contains(host)) return Number(host.dataset.o) + textBefore(host, node) + codePoints(node.data.slice(0, off));
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
