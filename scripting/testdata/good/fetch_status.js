"use strict";

const DEFAULT_URL = "https://example.com/health";

async function fetchStatus(host, url) {
  const response = await host.httpGet(url, { headers: { Accept: "application/json" } });
  return { status: response.status, length: response.body.length };
}

defineTool({
  name: "fetch_status",
  description: "Fetches a URL and reports its HTTP status and body length.",
  parameters: {
    type: "object",
    properties: { url: { type: "string", format: "uri" } },
    additionalProperties: false,
  },
  run: async (args, host) => fetchStatus(host, args.url || DEFAULT_URL),
});
