/**
 * Entry point of the SubprocessExecutor's child process: the guest runtime (guest-runtime.ts) over
 * Node's IPC channel to the host.
 */
import type { GuestToHost } from "../rpc/protocol.js";
import { startGuestRuntime } from "./guest-runtime.js";

const send = (message: GuestToHost): void => {
  if (!process.send) throw new Error("ts-code-mode child started without an IPC channel");
  process.send(message);
};

startGuestRuntime({
  send,
  sendThen: (message, done) => void process.send?.(message, undefined, undefined, done),
  onMessage: (listener) => void process.on("message", listener),
  onDisconnect: (listener) => void process.on("disconnect", listener),
});
