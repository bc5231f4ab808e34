// The live page: ask the server for its tip now and then; when new commits arrived, fetch
// this very page again and swap its data region (#live) in place, so the reader keeps their
// scroll position, their focus and any open <details>.
(function () {
  "use strict";
  var body = document.body;
  if (body.dataset.live !== "1" || !window.fetch || !window.DOMParser) return;
  var tip = body.dataset.tip;
  var every = Number(body.dataset.poll || 2000);
  var status = document.getElementById("live-status");

  function say(text) { if (status) status.textContent = text; }

  function keepPlace(here, fresh) {
    var active = document.activeElement;
    var focusKey = active && here.contains(active) ?
      (active.id || active.getAttribute("href")) : null;
    var open = Array.prototype.map.call(here.querySelectorAll("details[open]"),
      function (d) { return d.querySelector("summary").textContent; });
    // what the reader has typed or chosen in a form and not yet sent (a filter half written)
    var edited = {};
    Array.prototype.forEach.call(here.querySelectorAll("input[id], select[id]"), function (f) {
      var changed = f.tagName === "SELECT" ?
        Array.prototype.some.call(f.options, function (o) { return o.selected !== o.defaultSelected; }) :
        f.value !== f.defaultValue;
      if (changed) edited[f.id] = f.value;
    });
    here.replaceWith(fresh);
    Object.keys(edited).forEach(function (id) {
      var f = document.getElementById(id);
      if (f) f.value = edited[id];
    });
    Array.prototype.forEach.call(fresh.querySelectorAll("details"), function (d) {
      if (open.indexOf(d.querySelector("summary").textContent) >= 0) d.open = true;
    });
    if (focusKey) {
      var again = document.getElementById(focusKey) ||
        fresh.querySelector('[href="' + CSS.escape(focusKey) + '"]');
      if (again) again.focus({preventScroll: true});
    }
  }

  function refresh(newTip) {
    return fetch(location.href, {cache: "no-store"}).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    }).then(function (text) {
      var doc = new DOMParser().parseFromString(text, "text/html");
      var fresh = doc.getElementById("live");
      var here = document.getElementById("live");
      if (!fresh || !here) return;
      keepPlace(here, document.importNode(fresh, true));
      var foot = doc.getElementById("foot");
      if (foot) document.getElementById("foot").replaceWith(document.importNode(foot, true));
      tip = doc.body.dataset.tip || newTip;
      body.dataset.tip = tip;
      say("Updated with commit " + tip.slice(0, 10) + " at " +
          new Date().toLocaleTimeString() + ".");
    });
  }

  function poll() {
    if (document.hidden) return setTimeout(poll, every);
    fetch("/api/tip", {cache: "no-store"}).then(function (r) { return r.json(); })
      .then(function (j) { return j.commit && j.commit !== tip ? refresh(j.commit) : null; })
      .catch(function () { say("Live updates paused: the server does not answer."); })
      .then(function () { setTimeout(poll, every); });
  }
  setTimeout(poll, every);
})();
