// Compare's panels: one grid, scrolled together by text position, a click picks a chunk.
const scrolls = new Map(); // view -> [scrollTop of each panel]
let reveal = false; // a click picked a chunk: show its inspector (below the panels) after the rerun

function codePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// The text position at the top of a panel's box: the offset of the first character shown.
function topPosition(box) {
  const top = box.getBoundingClientRect().top + 4;
  for (const s of box.querySelectorAll("[data-o]")) {
    const rects = s.getClientRects();
    if (!rects.length || rects[rects.length - 1].bottom <= top) continue;
    const t = s.firstChild;
    if (!t || t.nodeType !== Node.TEXT_NODE || rects[0].top >= top) return Number(s.dataset.o);
    // the span starts above the top: find its first character on a visible line
    const cps = Array.from(t.data);
    const r = document.createRange();
    let lo = 0, hi = cps.length - 1, units = (i) => cps.slice(0, i).join("").length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      r.setStart(t, units(mid));
      r.setEnd(t, units(mid + 1));
      const rc = r.getBoundingClientRect();
      if (rc.bottom <= top) lo = mid + 1;
      else hi = mid;
    }
    return Number(s.dataset.o) + lo;
  }
  return null;
}

// Scroll a panel's box so that text position `pos` sits `dy` pixels below its top.
function scrollToPosition(box, pos, dy) {
  let best = null;
  for (const s of box.querySelectorAll("[data-o]")) {
    if (Number(s.dataset.o) <= pos) best = s;
    else break;
  }
  if (!best) {
    box.scrollTop = 0;
    return;
  }
  let rect = best.getBoundingClientRect();
  const t = best.firstChild;
  const k = pos - Number(best.dataset.o);
  if (t && t.nodeType === Node.TEXT_NODE && k > 0) {
    const cps = Array.from(t.data);
    if (k < cps.length) {
      const r = document.createRange();
      const u = cps.slice(0, k).join("").length;
      r.setStart(t, u);
      r.setEnd(t, u + cps[k].length);
      rect = r.getBoundingClientRect();
    }
  }
  box.scrollTop += rect.top - box.getBoundingClientRect().top - dy;
}

function scroller(el) {
  for (let p = el.parentElement; p; p = p.parentElement) {
    const oy = getComputedStyle(p).overflowY;
    if ((oy === "auto" || oy === "scroll") && p.scrollHeight > p.clientHeight) return p;
  }
  return document.scrollingElement;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(":scope > .ce-cmp-view");
  if (!root) {
    root = document.createElement("div");
    root.className = "ce-cmp-view";
    parentElement.appendChild(root);
  }
  const before = Array.from(root.querySelectorAll(".ce-text")).map((b) => b.scrollTop);
  if (before.length) scrolls.set(root.dataset.view, before);
  root.innerHTML = data.html;
  root.dataset.view = data.view;
  const boxes = Array.from(root.querySelectorAll(".ce-cmp-body .ce-text"));
  const kept = scrolls.get(data.view) || [];
  boxes.forEach((b, i) => (b.scrollTop = kept[i] || 0));

  // the selected chunk stays in view in its panel (the others follow it)
  const sel = root.querySelector(".ce-idx-sel");
  if (sel) {
    const box = sel.closest(".ce-text");
    const view = box.getBoundingClientRect(), r = sel.getBoundingClientRect();
    if (r.top < view.top || r.bottom > view.bottom) box.scrollTop += r.top - view.top - 24;
  }

  let leader = null, release = null;
  for (const box of boxes) {
    box.addEventListener("scroll", () => {
      if (leader && leader !== box) return; // moved by the leader: do not echo
      leader = box;
      clearTimeout(release);
      release = setTimeout(() => (leader = null), 200);
      const pos = topPosition(box);
      if (pos === null) return;
      const dy = 0;
      for (const other of boxes) if (other !== box) scrollToPosition(other, pos, dy);
    });
  }
  if (sel) sel.closest(".ce-text").dispatchEvent(new Event("scroll"));

  if (reveal && sel) {
    reveal = false;
    const s = scroller(root);
    const bottom = root.getBoundingClientRect().bottom;
    if (bottom > window.innerHeight * 0.55) s.scrollTop += bottom - window.innerHeight * 0.45;
  }

  root.onclick = (e) => {
    const selection = window.getSelection();
    if (selection && !selection.isCollapsed) return;
    const el = e.target.closest("[data-c]");
    const body = e.target.closest(".ce-cmp-body");
    if (!el || !body) return;
    const panel = Number(body.dataset.panel);
    const cs = el.dataset.c.split(" ").map(Number);
    let pick = cs[0];
    const cur = data.selected;
    const here = cur && cur[0] === panel ? cs.indexOf(cur[1]) : -1;
    if (cs.length > 1 && here >= 0) pick = cs[(here + 1) % cs.length];
    reveal = true;
    setTriggerValue("pick", { panel, chunk: pick });
  };
}
