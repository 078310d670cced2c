/**
 * Entry point inside the container: the same guest runtime as the subprocess child
 * (../subprocess/guest-runtime.ts), reaching the host over the unix socket the host bind-mounts
 * into the container (the container has no network). The socket's path comes from
 * TS_CODE_MODE_SOCKET.
 */
import { connect } from "node:net";
import type { GuestToHost } from "../rpc/protocol.js";
import { startGuestRuntime } from "../subprocess/guest-runtime.js";
import { encodeFrame, FrameReader } from "./frames.js";

/** The host is trusted; the cap only stops a broken stream from buffering forever. */
const MAX_HOST_FRAME_BYTES = 1024 * 1024 * 1024;

const socketPath = process.env["TS_CODE_MODE_SOCKET"];
if (!socketPath) throw new Error("ts-code-mode container entry started without TS_CODE_MODE_SOCKET");
const socket = connect(socketPath);
socket.on("error", () => process.exit(0));
const send = (message: GuestToHost): void => void socket.write(encodeFrame(message));
socket.once("connect", () =>
  startGuestRuntime({
    send,
    sendThen: (message, done) => void socket.write(encodeFrame(message), () => done()),
    onMessage: (listener) => {
      const reader = new FrameReader(MAX_HOST_FRAME_BYTES, listener, () => socket.destroy());
      socket.on("data", (chunk: Buffer) => reader.push(chunk));
    },
    onDisconnect: (listener) => void socket.on("close", listener),
  }),
);
