// Vitest without globals (its default): the hooks come from "vitest" and
// are given to useMediamock, which then works as under node:test.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from "vitest";
import { useMediamock } from "@mediamock/server";

const mm = useMediamock({ hooks: { beforeAll, afterAll, beforeEach, afterEach } });

test("a sandbox per test, under Vitest", async () => {
  const account = await mm.sandbox.api().get("/account");
  expect(account.status).toBe(200);
  expect(account.data?.workspace_id).toBe(mm.sandbox.workspaceId);
  await mm.sandbox.control.assertGoodClient();
});
