// The review page: one item at a time; a/r/s decide, u undoes. State lives on the server (ledger).
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const reviewerInput = $("reviewer");
  let state = null;
  let busy = false;

  function reviewer() { return reviewerInput.value.trim(); }

  function say(text, isError) {
    $("message").textContent = text || "";
    $("message").className = isError ? "error" : "";
  }

  function fmt(x) { return x === null || x === undefined ? "n/a" : x.toFixed(3); }

  function render(s) {
    state = s;
    $("release").textContent = s.release;
    $("done").textContent = s.done;
    $("total").textContent = s.total;
    $("bar-fill").style.width = (s.total ? (100 * s.done / s.total) : 0) + "%";
    $("precision").textContent = fmt(s.precision);
    $("interval").textContent = s.precision === null ? "" : "[" + fmt(s.low) + ", " + fmt(s.high) + "]";
    $("counts").textContent = s.accepted + " accepted, " + s.rejected + " rejected, " + s.skipped + " skipped";
    $("undo").disabled = !s.can_undo;
    $("undo-finished").disabled = !s.can_undo;
    $("skipped-finished").textContent = s.skipped;
    const item = s.item;
    $("card").hidden = !item;
    $("finished").hidden = !!item || !s.reviewer;
    if (!item) { return; }
    const meta = $("meta");
    meta.replaceChildren();
    const bits = [["item", (item.position + 1) + " of " + s.total], ["label", item.label],
      ["pattern", item.pattern], ["rule", item.rule || "n/a"],
      ["negated", item.negated === null ? "n/a" : (item.negated ? "yes" : "no")],
      ["post", item.post_id + " · segment " + item.segment_index]];
    bits.forEach(([k, v], i) => {
      if (i) { meta.append(" · "); }
      const code = document.createElement("code");
      code.textContent = v;
      meta.append(k + " ", code);
    });
    const box = $("text");
    const mark = document.createElement("mark");
    mark.id = "word";
    mark.dataset.itemId = item.item_id;
    mark.textContent = item.text.slice(item.start, item.end);
    box.replaceChildren(item.text.slice(0, item.start), mark, item.text.slice(item.end));
    mark.scrollIntoView({block: "center"});
  }

  async function call(url, body) {
    const opts = body === undefined ? {} : {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body)};
    const res = await fetch(url, opts);
    const data = await res.json();
    if (!res.ok) { throw new Error(data.error || res.statusText); }
    return data;
  }

  async function load() {
    try { render(await call("/api/state?reviewer=" + encodeURIComponent(reviewer()))); }
    catch (e) { say(e.message, true); }
  }

  function needName() {
    if (reviewer()) { reviewerInput.classList.remove("missing"); return false; }
    reviewerInput.classList.add("missing");
    reviewerInput.focus();
    say("Enter your name as reviewer first.", true);
    return true;
  }

  async function act(url, body, done) {
    if (busy || needName()) { return; }
    busy = true;
    try { render(await call(url, body)); say(done(state)); }
    catch (e) { say(e.message, true); }
    finally { busy = false; }
  }

  const words = {accept: "Accepted", reject: "Rejected", skip: "Skipped"};
  function decide(decision) {
    if (!state || !state.item) { return; }
    const item = state.item;
    act("/api/decide", {reviewer: reviewer(), item_id: item.item_id, decision: decision},
      () => words[decision] + " '" + item.surface + "'. Press u to undo.");
  }
  function undo() {
    act("/api/undo", {reviewer: reviewer()}, (s) => "Undone: '" + (s.item ? s.item.surface : "") + "' is back.");
  }

  document.querySelectorAll("#buttons button[data-decision]").forEach((b) =>
    b.addEventListener("click", () => decide(b.dataset.decision)));
  $("undo").addEventListener("click", undo);
  $("undo-finished").addEventListener("click", undo);
  document.addEventListener("keydown", (ev) => {
    if (ev.target === reviewerInput || ev.ctrlKey || ev.metaKey || ev.altKey) { return; }
    const key = ev.key.toLowerCase();
    if (key === "a") { decide("accept"); }
    else if (key === "r") { decide("reject"); }
    else if (key === "s") { decide("skip"); }
    else if (key === "u") { undo(); }
    else { return; }
    ev.preventDefault();
  });
  reviewerInput.addEventListener("change", () => {
    localStorage.setItem("express-reviewer", reviewer());
    reviewerInput.classList.remove("missing");
    say("");
    load();
  });
  reviewerInput.addEventListener("keydown", (ev) => { if (ev.key === "Enter") { reviewerInput.blur(); } });
  const params = new URLSearchParams(location.search);
  reviewerInput.value = params.get("reviewer") || localStorage.getItem("express-reviewer") || "";
  load();
})();
