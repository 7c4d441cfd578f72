/** Agent runs for the scope tests: long tool outputs naming a secret, one exchange the same in every run. */

/** An agent run whose tool outputs are long logs naming `secret`; its third exchange is the same in every run (`shared`). */
export function agentRun(id: string | undefined, secret: string, shared: string): { id?: string; messages: unknown[] } {
  const messages: unknown[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: `Fix the build of project ${id ?? "x"}.` },
  ];
  for (let i = 0; i < 6; i++) {
    const callId = i === 2 ? "call_shared" : `call_${id ?? "x"}_${i}`;
    const cmd = i === 1 ? `deploy --password ${secret}` : `make step${i}`;
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: callId, type: "function", function: { name: "bash", arguments: JSON.stringify({ cmd }) } }],
    });
    const body =
      i === 2 ? shared : Array.from({ length: 200 }, (_, k) => `${id ?? "x"} step ${i} line ${k}: ${cmd} compiling module_${k} ok ${secret}`).join("\n");
    messages.push({ role: "tool", tool_call_id: callId, content: body });
  }
  messages.push({ role: "assistant", content: "Done." });
  return id === undefined ? { messages } : { id, messages };
}
