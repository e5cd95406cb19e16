// The API console: Swagger UI (vendored from the flask-swagger-ui package, served under
// /docs/swagger-ui/) on this server's own contract. Its "Try it out" sends real requests to
// this origin; "Authorize" takes a seat, player or platform token for the contract's `bearer`
// scheme. validatorUrl: null keeps the page from calling the public validator service; syntax
// highlighting is off because it makes large answers (the catalog's schemas) slow to show.
"use strict";
window.addEventListener("DOMContentLoaded", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.yaml",
    dom_id: "#console",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    deepLinking: true,
    validatorUrl: null,
    displayRequestDuration: true,
    syntaxHighlight: false,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
  });
});
