// Causeway dashboard script: live regions, copy buttons, confirmations.
// Everything works from server-rendered HTML; this only keeps pages current
// and adds small conveniences. No token is ever visible here: the session
// lives in an HttpOnly cookie, and state-changing requests carry the page's
// CSRF token in their form.
(function () {
  "use strict";

  // Live regions: #live[data-live] is fetched again and replaced in place,
  // quickly while something moves (data-active on the fragment), slowly
  // otherwise. A 401 means the session ended: go to sign-in and come back.
  var FAST = 1500, SLOW = 10000;

  function focusKey(el) {
    if (!el || el === document.body) return null;
    if (el.id) return "#" + el.id;
    if (el.getAttribute("href")) return 'a[href="' + el.getAttribute("href") + '"]';
    return null;
  }

  function startLive(box) {
    var url = box.getAttribute("data-live");
    var status = document.getElementById("live-status");
    var last = box.innerHTML;
    function active() {
      var root = box.querySelector(".live-root");
      return root && root.getAttribute("data-active") === "true";
    }
    function schedule() {
      setTimeout(poll, document.hidden ? SLOW : (active() ? FAST : SLOW));
    }
    function poll() {
      fetch(url, { credentials: "same-origin", headers: { "X-Requested-With": "causeway-live" }, cache: "no-store" })
        .then(function (r) {
          if (r.status === 401) {
            location.assign("/ui/login?next=" + encodeURIComponent(location.pathname + location.search));
            throw new Error("signed out");
          }
          if (!r.ok) throw new Error("HTTP " + r.status);
          return r.text();
        })
        .then(function (html) {
          if (html !== last) {
            var key = focusKey(box.contains(document.activeElement) ? document.activeElement : null);
            box.innerHTML = html;
            last = html;
            if (key) {
              var again = box.querySelector(key);
              if (again) again.focus();
            }
            var root = box.querySelector(".live-root");
            if (status && root && status.textContent !== root.getAttribute("data-summary")) {
              status.textContent = root.getAttribute("data-summary");
            }
          }
          schedule();
        })
        .catch(function (e) {
          if (e.message !== "signed out") schedule();
        });
    }
    schedule();
  }

  // Copy buttons: data-copy names the input whose value is copied.
  function copy(btn) {
    var input = document.getElementById(btn.getAttribute("data-copy"));
    var done = function () {
      btn.textContent = "Copied";
      var s = document.getElementById("copy-status");
      if (s) s.textContent = (input.labels && input.labels[0] ? input.labels[0].textContent : "Value") + " copied to the clipboard";
      setTimeout(function () { btn.textContent = "Copy"; }, 2000);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(done, function () { input.select(); document.execCommand("copy"); done(); });
    } else {
      input.focus();
      input.select();
      document.execCommand("copy");
      done();
    }
  }

  document.addEventListener("click", function (e) {
    var btn = e.target.closest && e.target.closest("button[data-copy]");
    if (btn) copy(btn);
  });

  // Forms with data-confirm ask before they are sent.
  document.addEventListener("submit", function (e) {
    var msg = e.target.getAttribute && e.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) e.preventDefault();
  });

  document.addEventListener("DOMContentLoaded", function () {
    var box = document.getElementById("live");
    if (box && box.getAttribute("data-live")) startLive(box);
    var problem = document.getElementById("problem");
    if (problem) {
      // Move keyboard and screen-reader users to what went wrong.
      problem.setAttribute("tabindex", "-1");
      problem.focus();
    }
  });
})();
