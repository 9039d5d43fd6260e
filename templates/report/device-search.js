// The device table's search: a row stays when every word typed is in its cells (any case); the
// others are hidden. Reads and writes text only (value, textContent), never markup. The report's
// Content-Security-Policy lets this script run by its SHA-256 and nothing else.
"use strict";
(() => {
  const search = document.getElementById("device-search");
  const input = search.querySelector("input");
  const count = document.getElementById("device-count");
  const rows = Array.from(document.querySelectorAll("#devices tbody tr"));
  const texts = rows.map((row) => Array.from(row.cells, (cell) => cell.textContent.toLowerCase()).join("\t"));
  const total = rows.length.toLocaleString("en");
  const filter = () => {
    const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    rows.forEach((row, index) => {
      const match = words.every((word) => texts[index].includes(word));
      if (row.hidden === match) {
        row.hidden = !match;
      }
      shown += match ? 1 : 0;
    });
    count.textContent = words.length ? `${shown.toLocaleString("en")} of ${total} switches` : `${total} switches`;
  };
  input.addEventListener("input", filter);
  search.hidden = false;
  filter();
})();
