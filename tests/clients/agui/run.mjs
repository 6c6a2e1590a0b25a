// Runs the official AG-UI client (@ag-ui/client) against an AG-UI endpoint and prints what it saw as one JSON line.
//
// The request is built and sent by HttpAgent (as an app would), the stream is parsed by the client's own
// SSE transform (which also validates every event against @ag-ui/core's schemas), and verifyEvents applies
// the client's ordering rules. Nothing here interprets the wire itself.
//
//   AGUI_URL=https://…/v1/agents/agt_…/agui AGUI_TOKEN=… NODE_EXTRA_CA_CERTS=ca.pem node run.mjs '<RunAgentInput JSON>'
//
// Output: {"ok": bool, "error": string|null, "types": [...], "text": "...", "events": [...]}
import { HttpAgent, verifyEvents } from "@ag-ui/client";

const url = process.env.AGUI_URL;
const token = process.env.AGUI_TOKEN;
if (!url || !token || process.argv.length < 3) {
  console.error("usage: AGUI_URL=… AGUI_TOKEN=… node run.mjs '<RunAgentInput JSON>'");
  process.exit(2);
}
const input = JSON.parse(process.argv[2]);
const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` } });

const events = [];
const finish = (error) => {
  const text = events
    .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
    .map((e) => e.delta)
    .join("");
  process.stdout.write(
    JSON.stringify({ ok: !error, error: error ? String(error.message ?? error) : null,
                     types: events.map((e) => e.type), text, events }) + "\n",
  );
};

verifyEvents()(agent.run(input)).subscribe({
  next: (event) => events.push(event),
  error: (error) => finish(error),
  complete: () => finish(null),
});
