// Arboretum Arena: what every page does with script (everything also works without it).
"use strict";

(function () {
  document.documentElement.classList.add("js");

  // A table marked "stack" turns into stacked rows on a phone (style.css): each cell is labelled
  // with its column's heading.
  function labelTables(root) {
    root.querySelectorAll("table.stack").forEach((table) => {
      const heads = Array.from(table.querySelectorAll("thead th")).map((th) => th.textContent.trim());
      table.querySelectorAll("tbody tr").forEach((tr) => {
        let col = 0;
        Array.from(tr.children).forEach((td) => {
          if (!td.dataset.label && heads[col]) td.dataset.label = heads[col];
          col += Number(td.getAttribute("colspan") || 1);
        });
      });
    });
  }

  // A table wider than its card scrolls sideways: it says so, and it takes focus (keyboard).
  function hintScrolls(root) {
    root.querySelectorAll(".table-scroll").forEach((box) => {
      const scrolls = box.scrollWidth > box.clientWidth + 1;
      box.classList.toggle("scrolls", scrolls);
      if (scrolls) {
        box.tabIndex = 0;
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", "table: scroll sideways for more columns");
      } else {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    });
  }
  window.arenaTables = { labelTables, hintScrolls };
  document.addEventListener("DOMContentLoaded", () => {
    // The menu folds away on narrow screens behind its button.
    const top = document.getElementById("top");
    const toggle = document.getElementById("menu-toggle");
    if (top && toggle) {
      toggle.hidden = false;
      toggle.addEventListener("click", () => {
        const open = top.classList.toggle("open");
        toggle.setAttribute("aria-expanded", open ? "true" : "false");
      });
    }
    labelTables(document);
    hintScrolls(document);
    window.addEventListener("resize", () => hintScrolls(document));
    // Filters apply as soon as they change.
    document.querySelectorAll("[data-autosubmit]").forEach((input) => {
      input.addEventListener("change", () => input.form && input.form.submit());
    });
  });
})();
