// A chunk's exact text in a scrolling box, with a button that copies it. The text goes in as
// textContent (never HTML); the height and the label come from Python (pages/ui/textbox.py).

function copyText(text, done) {
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => copyBySelection(text, done));
  } else {
    copyBySelection(text, done);
  }
}

// a page served over plain http to another machine has no navigator.clipboard
function copyBySelection(text, done) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  try {
    if (document.execCommand("copy")) done();
  } finally {
    area.remove();
  }
}

export default function (component) {
  const { data, parentElement } = component;
  let root = parentElement.querySelector(":scope > .ce-box");
  if (!root) {
    root = document.createElement("div");
    root.className = "ce-box";
    const pre = document.createElement("pre");
    pre.tabIndex = 0;
    pre.setAttribute("role", "region");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "ce-box-copy";
    root.append(pre, button);
    parentElement.appendChild(root);
  }
  const pre = root.querySelector("pre");
  const button = root.querySelector("button");
  const text = String(data.text ?? "");
  if (pre.textContent !== text) {
    pre.textContent = text;
    pre.scrollTop = 0;
  }
  pre.style.maxHeight = data.height ? `${Number(data.height)}px` : "";
  pre.setAttribute("aria-label", String(data.label ?? "Text"));
  button.textContent = "Copy";
  button.title = "Copy the text";
  button.onclick = () =>
    copyText(text, () => {
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = "Copy"), 1500);
    });
}
