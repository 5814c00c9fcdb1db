// A small typed HTTP client over fetch, for any document openapi-typescript
// generated `paths` for: the service's API (openapi.json) and the control
// API (control.json). Paths, path and query parameters, JSON bodies and
// success responses are all typed from the document.

/** The HTTP methods the documents use. */
export type Method = "get" | "put" | "post" | "delete" | "patch";

type OpOf<Paths, P extends keyof Paths, M extends Method> = NonNullable<Paths[P][M & keyof Paths[P]]>;

/** The paths of a document that have an operation for a method. */
export type PathsWith<Paths, M extends Method> = {
  [P in keyof Paths]: [OpOf<Paths, P, M>] extends [never] ? never : P;
}[keyof Paths];

type Content<T> = T extends { content: infer C } ? C : never;
type JsonOf<T> = Content<T> extends { "application/json": infer B } ? B
  : Content<T> extends { "application/octet-stream": unknown } ? ArrayBuffer
  : undefined;
type Success = 200 | 201 | 202 | 204;

/** The JSON body of an operation's success responses. */
export type ResponseOf<Paths, P extends keyof Paths, M extends Method> =
  OpOf<Paths, P, M> extends { responses: infer R }
    ? { [S in keyof R & Success]: JsonOf<R[S]> }[keyof R & Success]
    : never;

/** The JSON body an operation takes (`never` when it takes none). */
export type BodyOf<Paths, P extends keyof Paths, M extends Method> =
  OpOf<Paths, P, M> extends { requestBody?: infer RB } ? JsonOf<NonNullable<RB>> : never;

type ParamsOf<Paths, P extends keyof Paths, M extends Method, K extends "path" | "query"> =
  OpOf<Paths, P, M> extends { parameters: infer PS } ? (PS extends { [k in K]?: infer X } ? X : never) : never;

/** What a call takes besides its method and path. */
export type CallInit<Paths, P extends keyof Paths, M extends Method> = {
  /** The path's parameters (`{id}` in `/generations/{id}`). */
  params?: ParamsOf<Paths, P, M, "path">;
  /** Query parameters. */
  query?: ParamsOf<Paths, P, M, "query">;
  /** A JSON body. */
  body?: BodyOf<Paths, P, M>;
  /** A multipart body instead (uploads). */
  form?: FormData;
  /** A bearer token for this call, instead of the client's. */
  token?: string;
  /** More headers. */
  headers?: Record<string, string>;
  signal?: AbortSignal;
};

/** The outcome of a call: `data` on success, `error` (the JSON error body) otherwise. */
export type CallResult<T> =
  | { ok: true; status: number; headers: Headers; data: T; error?: undefined }
  | { ok: false; status: number; headers: Headers; data?: undefined; error: ErrorBody };

/** The error body both APIs answer with. */
export interface ErrorBody {
  error?: { code?: string; message?: string; details?: unknown; [k: string]: unknown };
  [k: string]: unknown;
}

/** A typed client of one document's paths, rooted at a base URL. */
export class HttpClient<Paths> {
  constructor(
    /** The base every path is appended to (`http://127.0.0.1:PORT/api/v1`). */
    readonly baseURL: string,
    /** The bearer token sent with every call, if any. */
    readonly token?: string,
    /** Whether a state-changing call always carries a JSON body (the control API wants one). */
    private readonly alwaysJSON = false,
  ) {}

  /** The same client with another bearer token. */
  withToken(token: string | undefined): this {
    const Self = this.constructor as new (baseURL: string, token?: string, alwaysJSON?: boolean) => this;
    return new Self(this.baseURL, token, this.alwaysJSON);
  }

  async call<M extends Method, P extends PathsWith<Paths, M>>(
    method: M, path: P, init: CallInit<Paths, P, M> = {},
  ): Promise<CallResult<ResponseOf<Paths, P, M>>> {
    let url = this.baseURL + String(path).replace(/\{([^}]+)\}/g, (_, name: string) => {
      const v = (init.params as Record<string, unknown> | undefined)?.[name];
      if (v === undefined) throw new TypeError(`${String(path)}: path parameter ${name} is missing`);
      return encodeURIComponent(String(v));
    });
    const query = init.query as Record<string, unknown> | undefined;
    if (query) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined || v === null) continue;
        for (const item of Array.isArray(v) ? v : [v]) qs.append(k, String(item));
      }
      const s = qs.toString();
      if (s) url += (url.includes("?") ? "&" : "?") + s;
    }
    const headers: Record<string, string> = { Accept: "application/json", ...init.headers };
    const token = init.token ?? this.token;
    if (token) headers.Authorization = `Bearer ${token}`;
    let body: string | FormData | undefined;
    if (init.form) {
      body = init.form;
    } else if (init.body !== undefined || (this.alwaysJSON && method !== "get")) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(init.body ?? {});
    }
    const res = await fetch(url, { method: method.toUpperCase(), headers, body, signal: init.signal });
    const type = res.headers.get("content-type") ?? "";
    const parsed: unknown = type.startsWith("application/json") ? await res.json()
      : res.status === 204 ? undefined : await res.arrayBuffer();
    if (res.ok) {
      return { ok: true, status: res.status, headers: res.headers, data: parsed as ResponseOf<Paths, P, M> };
    }
    const error: ErrorBody = parsed && typeof parsed === "object" && !(parsed instanceof ArrayBuffer)
      ? (parsed as ErrorBody)
      : { error: { code: `http_${res.status}`, message: parsed instanceof ArrayBuffer ? Buffer.from(parsed).toString("utf8").slice(0, 500) : "" } };
    return { ok: false, status: res.status, headers: res.headers, error };
  }

  get<P extends PathsWith<Paths, "get">>(path: P, init?: CallInit<Paths, P, "get">) {
    return this.call("get", path, init);
  }
  post<P extends PathsWith<Paths, "post">>(path: P, init?: CallInit<Paths, P, "post">) {
    return this.call("post", path, init);
  }
  put<P extends PathsWith<Paths, "put">>(path: P, init?: CallInit<Paths, P, "put">) {
    return this.call("put", path, init);
  }
  delete<P extends PathsWith<Paths, "delete">>(path: P, init?: CallInit<Paths, P, "delete">) {
    return this.call("delete", path, init);
  }
}
