/**
 * /docs: Swagger UI (swagger-ui-dist from npm, bundled here and served by the gateway from its
 * own hashed assets: no CDN) rendering /openapi.json, with "Try it out" against this gateway.
 * This file replaces the inline initializer swagger-ui ships (index.html + swagger-initializer.js)
 * so the page runs under the dashboard's CSP (no inline script, no eval).
 */
// @ts-expect-error: the prebuilt UMD bundle ships without types
import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-bundle.js';
import 'swagger-ui-dist/swagger-ui.css';
import './docs.css';

SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  tryItOutEnabled: false,
  // No "validator" badge: it would send the document to validator.swagger.io.
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
