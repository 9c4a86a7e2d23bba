// Starts Redoc on the API's documentation page (templates/portal/api_docs.html) with the settings
// the page holds and the answer's nonce, which Redoc puts on the <style> elements it writes: the
// page's Content-Security-Policy allows no other inline style (portal/api/router.py ApiDocs).
(function () {
  "use strict";
  var container = document.getElementById("redoc-container");
  var options = JSON.parse(document.getElementById("redoc-settings").textContent);
  options.nonce = container.dataset.nonce;
  window.Redoc.init(container.dataset.schemaUrl, options, container);
})();
