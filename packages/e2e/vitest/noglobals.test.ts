// Without globals and without hooks, useMediamock says how to fix it,
// instead of registering with node:test and failing in every test.
import { expect, test } from "vitest";
import { useMediamock } from "@mediamock/server";

test("useMediamock() without hooks names the fix", () => {
  expect(() => useMediamock()).toThrow(/Vitest runs without globals.*import \{ beforeAll, afterAll, beforeEach, afterEach \} from "vitest"/);
});
