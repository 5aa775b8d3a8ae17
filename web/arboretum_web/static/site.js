// Arboretum Arena: what every page does with script (everything also works without it).
"use strict";

(function () {
  document.documentElement.classList.add("js");
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
    // Filters apply as soon as they change.
    document.querySelectorAll("[data-autosubmit]").forEach((input) => {
      input.addEventListener("change", () => input.form && input.form.submit());
    });
  });
})();
