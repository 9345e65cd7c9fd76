// fetch_status: http_get is denied to scripts unless the host's [tool_script_permissions]
// allows it; the refusal is an exception the script may catch.
defineTool({
  name: "fetch_status",
  description: "Fetches a URL and reports its HTTP status.",
  parameters: {
    type: "object",
    properties: { url: { type: "string", minLength: 1 } },
    required: ["url"],
    additionalProperties: false
  },
  run: async function (args, host) {
    try {
      const res = await host.httpGet(args.url, {});
      return "status " + res.status;
    } catch (e) {
      return "could not fetch " + args.url + ": " + e.message;
    }
  }
});
