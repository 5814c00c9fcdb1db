// @mediamock/server: the mediamock binary for this platform, and helpers to
// run it in tests. See README.md.
export { connectMediamock, startMediamock } from "./server";
export type {
  ApiClient, ApiPaths, ApiSchemas, FixtureKey, Mediamock, MediamockOptions, MediamockSandbox,
} from "./server";
export { useMediamock } from "./fixture";
export type { Hooks, MediamockFixture, UseMediamockOptions } from "./fixture";
export { ControlClient } from "./control";
export type {
  ClientReport, Clock, ControlPaths, ControlSchemas, FailRule, Faults, ForcedResponse, Har, Health, JobAction, Journal, JournalEntry, JournalQuery,
  Ledger, OperationId,
  Sandbox, SandboxRunResult, SandboxSpec, Workspace, WorkspaceDetail,
} from "./control";
export { HttpClient } from "./http";
export type { BodyOf, CallInit, CallResult, ErrorBody, Method, PathsWith, ResponseOf } from "./http";
export { MediamockError, currentPlatform, platformPackage, resolveBinary, supportedPlatforms, version } from "./platform";
export type { MediamockErrorCode } from "./platform";
