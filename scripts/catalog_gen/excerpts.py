"""Per-language source-excerpt templates for `catalog/apps/*.yaml` (written for this project).

Every non-datastore service gets three files, in this order:

1. ``handler``: the request handler of its main operation;
2. ``client``: the client of its most important downstream (or, without one, a second
   business-logic file, role ``logic``);
3. ``config``: the config loader that reads ``<T>_ADDR`` / ``<T>_TIMEOUT_MS`` per downstream,
   ``WORKER_THREADS`` and (when it calls a datastore) ``CACHE_TTL_S``.

Datastores and queues get one config file (redis.conf, my.cnf, server.properties, ...).

Templates use ``{{key}}`` placeholders filled from a context dict built by `apps.py`.
Nothing here is random: the same context always renders the same text.
"""

from __future__ import annotations

import re

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")

MIN_LINES, MAX_LINES = 8, 20


def fill(template: str, ctx: dict) -> str:
    def sub(m: re.Match) -> str:
        return str(ctx[m.group(1)])

    text = _PLACEHOLDER.sub(sub, template.strip("\n"))
    return text.rstrip() + "\n"


def camel(name: str) -> str:
    """'product-catalog' -> 'ProductCatalog', 'ts-order-service' -> 'OrderService'."""
    if name.startswith("ts-"):
        name = name[3:]
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^A-Za-z0-9]+", name) if p)


def lower_camel(name: str) -> str:
    c = camel(name)
    return c[:1].lower() + c[1:]


def snake(name: str) -> str:
    if name.startswith("ts-"):
        name = name[3:]
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def op_snake(op: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", op).lower()


def _wrap(items: list[str], per_line: int, indent: str, sep: str = ", ") -> str:
    rows = [sep.join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return (sep.rstrip() + "\n").join(indent + r for r in rows)


# --------------------------------------------------------------------------------------
# config-loader dependency lines (one line per downstream; a loop when there are many)
# --------------------------------------------------------------------------------------
LOOP_THRESHOLD = 10


def _per_line(deps: list[dict]) -> int:
    return max(4, -(-len(deps) // 5))


def dep_lines(lang: str, deps: list[dict]) -> str:
    many = len(deps) > LOOP_THRESHOLD
    if lang == "go":
        if many:
            names = _wrap([f'"{d["PREFIX"]}"' for d in deps], _per_line(deps), "\t\t")
            return (
                "\tfor _, p := range []string{\n" + names + ",\n\t} {\n"
                '\t\tc.Addr[p] = mustEnv(p + "_ADDR")\n'
                '\t\tc.Timeout[p] = envMillis(p+"_TIMEOUT_MS", 2000)\n\t}'
            )
        return "\n".join(
            f'\tc.Addr["{d["name"]}"] = mustEnv("{d["PREFIX"]}_ADDR"); '
            f'c.Timeout["{d["name"]}"] = envMillis("{d["PREFIX"]}_TIMEOUT_MS", {d["timeout_ms"]})'
            for d in deps
        )
    if lang in ("java", "kotlin"):
        if many:
            names = _wrap([f'"{d["PREFIX"]}"' for d in deps], _per_line(deps), "            ")
            return (
                "        for (String p : List.of(\n" + names + ")) {\n"
                '            ADDR.put(p, env(p + "_ADDR", null));\n'
                '            TIMEOUT_MS.put(p, Integer.parseInt(env(p + "_TIMEOUT_MS", "2000")));\n        }'
            )
        return "\n".join(
            f'        ADDR.put("{d["name"]}", env("{d["PREFIX"]}_ADDR", "{d["addr"]}")); '
            f'TIMEOUT_MS.put("{d["name"]}", '
            f'Integer.parseInt(env("{d["PREFIX"]}_TIMEOUT_MS", "{d["timeout_ms"]}")));'
            for d in deps
        )
    if lang == "csharp":
        return "\n".join(
            f'    Downstream("{d["name"]}", Env("{d["PREFIX"]}_ADDR", "{d["addr"]}"), '
            f'EnvInt("{d["PREFIX"]}_TIMEOUT_MS", {d["timeout_ms"]}));'
            for d in deps
        )
    if lang in ("node", "ts"):
        return "\n".join(
            f'  "{d["name"]}": {{ addr: env("{d["PREFIX"]}_ADDR", "{d["addr"]}"), '
            f'timeoutMs: Number(env("{d["PREFIX"]}_TIMEOUT_MS", "{d["timeout_ms"]}")) }},'
            for d in deps
        )
    if lang == "python":
        return "\n".join(
            f'    "{d["name"]}": Downstream(os.environ.get("{d["PREFIX"]}_ADDR", "{d["addr"]}"), '
            f'int(os.environ.get("{d["PREFIX"]}_TIMEOUT_MS", "{d["timeout_ms"]}"))),'
            for d in deps
        )
    if lang == "ruby":
        return "\n".join(
            f'  "{d["name"]}" => {{ addr: ENV.fetch("{d["PREFIX"]}_ADDR", "{d["addr"]}"), '
            f'timeout_ms: ENV.fetch("{d["PREFIX"]}_TIMEOUT_MS", "{d["timeout_ms"]}").to_i }},'
            for d in deps
        )
    if lang == "php":
        return "\n".join(
            f"    '{d['name']}' => ['addr' => getenv('{d['PREFIX']}_ADDR') ?: '{d['addr']}', "
            f"'timeout_ms' => (int) (getenv('{d['PREFIX']}_TIMEOUT_MS') ?: {d['timeout_ms']})],"
            for d in deps
        )
    if lang == "cpp":
        return "\n".join(
            f'  cfg.downstreams["{d["name"]}"] = {{EnvOr("{d["PREFIX"]}_ADDR", "{d["addr"]}"), '
            f'std::stoi(EnvOr("{d["PREFIX"]}_TIMEOUT_MS", "{d["timeout_ms"]}"))}};'
            for d in deps
        )
    if lang == "rust":
        return "\n".join(
            f'        downstream("{d["name"]}", env_or("{d["PREFIX"]}_ADDR", "{d["addr"]}"), '
            f'env_or("{d["PREFIX"]}_TIMEOUT_MS", "{d["timeout_ms"]}").parse()?),'
            for d in deps
        )
    if lang in ("sh",):
        return "\n".join(
            f': "${{{d["PREFIX"]}_ADDR:={d["addr"]}}}" "${{{d["PREFIX"]}_TIMEOUT_MS:={d["timeout_ms"]}}}"'
            for d in deps
        )
    raise KeyError(lang)


# --------------------------------------------------------------------------------------
# templates: lang -> role -> (path pattern, body). Roles: handler, handler_nodep, client,
# logic, config. Paths may contain placeholders.
# --------------------------------------------------------------------------------------
T: dict[str, dict[str, tuple[str, str]]] = {}

T["go"] = {
    "handler": (
        "main.go",
        """
// {{op}} serves {{route}}; it depends on {{main}} through s.{{main_var}}.
func (s *server) {{op}}(ctx context.Context, req *pb.{{op}}Request) (*pb.{{op}}Response, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout["{{main}}"])
	defer cancel()
	log.WithField("request", req).Debug("[{{op}}] received request")

	out, err := s.{{main_var}}.{{main_op}}(ctx, req)
	if err != nil {
		log.Warnf("[{{op}}] {{main}}.{{main_op}} failed: %v", err)
		return nil, status.Errorf(codes.Internal, "failed to {{op_words}}: %v", err)
	}
	if len(out.Items) > s.cfg.MaxItems {
		out.Items = out.Items[:s.cfg.MaxItems]
	}
	return &pb.{{op}}Response{Items: out.Items}, nil
}
""",
    ),
    "handler_http": (
        "main.go",
        """
// {{op_lc}}Handler serves HTTP requests; the page needs {{main}}.
func (fe *frontendServer) {{op_lc}}Handler(w http.ResponseWriter, r *http.Request) {
	log := r.Context().Value(ctxKeyLog{}).(logrus.FieldLogger)
	ctx, cancel := context.WithTimeout(r.Context(), fe.cfg.Timeout["{{main}}"])
	defer cancel()
	items, err := fe.{{main_var}}.{{main_op}}(ctx, currentCurrency(r))
	if err != nil {
		renderHTTPError(log, r, w, fmt.Errorf("could not retrieve data from {{main}}: %w", err), http.StatusInternalServerError)
		return
	}
	for i := 0; i < len(items) && i < fe.cfg.MaxItems; i++ {
		items[i].Price, err = fe.convertCurrency(ctx, items[i].PriceUsd, currentCurrency(r))
		if err != nil {
			renderHTTPError(log, r, w, fmt.Errorf("failed to convert currency: %w", err), http.StatusInternalServerError)
			return
		}
	}
	renderTemplate(w, "{{op_snake}}", map[string]any{"items": items, "session_id": sessionID(r)})
}
""",  # noqa: E501 (verbatim Go source excerpt)
    ),
    "handler_nodep": (
        "main.go",
        """
// {{op}} serves {{route}} from the in-memory data set.
func (s *server) {{op}}(ctx context.Context, req *pb.{{op}}Request) (*pb.{{op}}Response, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var items []*pb.Item
	for page := 0; page*pageSize < len(s.items); page++ {
		end := min((page+1)*pageSize, len(s.items))
		items = append(items, s.items[page*pageSize:end]...)
	}
	if len(items) == 0 {
		return nil, status.Errorf(codes.NotFound, "{{op_words}}: no items")
	}
	return &pb.{{op}}Response{Items: items}, nil
}
""",
    ),
    "client": (
        "{{main_file}}_client.go",
        """
// {{main_cls}}Client wraps calls from {{svc}} to {{main}} ({{main_proto}}).
func (c *{{main_var}}Client) {{main_op}}(ctx context.Context, req *pb.{{op}}Request) (*pb.{{main_op}}Response, error) {
	var lastErr error
	for attempt := 0; attempt <= c.retries; attempt++ { // retries = {{main_retries}}
		callCtx, cancel := context.WithTimeout(ctx, c.timeout) // {{MAIN}}_TIMEOUT_MS
		resp, err := c.stub.{{main_op}}(callCtx, toUpstream(req))
		cancel()
		if err == nil {
			return resp, nil
		}
		lastErr = err
		time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
	}
	return nil, fmt.Errorf("{{main}}.{{main_op}}: %w", lastErr)
}
""",  # noqa: E501 (verbatim Go source excerpt)
    ),
    "logic": (
        "{{logic_file}}.go",
        """
// cache of computed {{op2}} results, refreshed every cfg.CacheTTL.
func (s *server) lookup(key string) (*pb.Item, error) {
	s.mu.RLock()
	e, ok := s.cache[key]
	s.mu.RUnlock()
	if ok && time.Since(e.loadedAt) < s.cfg.CacheTTL {
		return e.item, nil
	}
	item, err := s.load(key)
	if err != nil {
		return nil, fmt.Errorf("{{op2}} %q: %w", key, err)
	}
	s.mu.Lock()
	s.cache[key] = cacheEntry{item: item, loadedAt: time.Now()}
	s.mu.Unlock()
	return item, nil
}
""",
    ),
    "config": (
        "config.go",
        """
// loadConfig reads {{svc}}'s environment (see deployment/{{svc}}).
func loadConfig() *Config {
	c := &Config{Addr: map[string]string{}, Timeout: map[string]time.Duration{}}
	c.Port = envInt("PORT", {{port}})
	c.WorkerThreads = envInt("WORKER_THREADS", {{threads}})
	c.CacheTTL = time.Duration(envInt("CACHE_TTL_S", {{ttl_default}})) * time.Second
	c.MaxItems = envInt("MAX_ITEMS", 50)
{{dep_lines}}
	return c
}
""",
    ),
}

T["java"] = {
    "handler": (
        "src/main/java/{{pkg_path}}/{{cls}}Impl.java",
        """
// {{cls}}Impl.{{op_lc}}: handles {{route}} and calls {{main}}.
@Override
public Response {{op_lc}}(Request request, HttpHeaders headers) {
    LOGGER.info("[{{op_lc}}][request][{}]", request.getId());
    Object upstream = {{main_call}};
    if (upstream == null) {
        LOGGER.error("[{{op_lc}}][{{main}} returned nothing][{}]", request.getId());
        return new Response<>(0, "{{op_words}} failed", null);
    }
    List<Object> items = new ArrayList<>();
    for (Object o : asList(upstream)) {
        if (items.size() >= MAX_RESULTS) { break; }
        items.add(o);
    }
    return new Response<>(1, "Success", items);
}
""",
    ),
    "handler_nodep": (
        "src/main/java/{{pkg_path}}/{{cls}}Impl.java",
        """
// {{cls}}Impl.{{op_lc}}: handles {{route}} without downstream calls.
@Override
public Response {{op_lc}}(Request request, HttpHeaders headers) {
    LOGGER.info("[{{op_lc}}][request][{}]", request.getId());
    List<Object> result = new ArrayList<>();
    for (int i = 0; i < Math.min(request.getCount(), MAX_RESULTS); i++) {
        result.add(catalog.get(random.nextInt(catalog.size())));
    }
    if (result.isEmpty()) {
        LOGGER.warn("[{{op_lc}}][empty result]");
        return new Response<>(0, "no data", null);
    }
    return new Response<>(1, "Success", result);
}
""",
    ),
    "client": (
        "src/main/java/{{pkg_path}}/client/{{main_cls}}Client.java",
        """
// {{main_cls}}Client: {{svc}} -> {{main}} ({{main_proto}}), timeout from {{MAIN}}_TIMEOUT_MS.
public Response {{main_op_lc}}(Object body, HttpHeaders headers) {
    String url = "http://" + ClientConfig.ADDR.get("{{main}}") + "{{main_route}}";
    int attempts = 1 + {{main_retries}};
    for (int i = 0; i < attempts; i++) {
        try {
            return restTemplate.exchange(url, HttpMethod.POST,
                new HttpEntity<>(body, headers), Response.class).getBody();
        } catch (ResourceAccessException e) {
            LOGGER.warn("[{{main_op_lc}}][{{main}} attempt {} failed][{}]", i + 1, e.getMessage());
        }
    }
    return null;
}
""",
    ),
    "logic": (
        "src/main/java/{{pkg_path}}/{{cls}}Cache.java",
        """
// {{cls}}Cache: caches {{op2_lc}} results for CACHE_TTL_S seconds.
public Object get(String key) {
    CacheEntry e = entries.get(key);
    long now = System.currentTimeMillis();
    if (e != null && now - e.loadedAt < ClientConfig.CACHE_TTL_S * 1000L) {
        return e.value;
    }
    Object fresh = loader.apply(key);
    if (fresh == null) {
        LOGGER.warn("[{{op2_lc}}][cache miss, loader returned null][{}]", key);
        return e == null ? null : e.value;
    }
    entries.put(key, new CacheEntry(fresh, now));
    return fresh;
}
""",
    ),
    "config": (
        "src/main/java/{{pkg_path}}/config/ClientConfig.java",
        """
// ClientConfig: reads {{svc}}'s downstream addresses and timeouts from the environment.
public final class ClientConfig {
    public static final Map<String, String> ADDR = new HashMap<>();
    public static final Map<String, Integer> TIMEOUT_MS = new HashMap<>();
    public static final int WORKER_THREADS = Integer.parseInt(env("WORKER_THREADS", "{{threads}}"));
    public static final int CACHE_TTL_S = Integer.parseInt(env("CACHE_TTL_S", "{{ttl_default}}"));
    static {
{{dep_lines}}
    }
    static String env(String k, String d) { String v = System.getenv(k); return v == null ? d : v; }
}
""",
    ),
}

JAVA_GRPC_HANDLER = (
    "src/main/java/{{pkg_root}}/{{cls}}.java",
    """
// {{cls}}.{{op_lc}}: serves {{route}} (gRPC).
public void {{op_lc}}({{op}}Request req, StreamObserver<{{op}}Response> responseObserver) {
    Span span = Span.current();
    try {
        List<Ad> ads = new ArrayList<>();
        span.setAttribute("app.ads.contextKeys", req.getContextKeysList().toString());
        for (String category : req.getContextKeysList()) {
            ads.addAll(adsByCategory.getOrDefault(category, List.of()));
        }
        if (ads.isEmpty()) { ads = getRandomAds(); }
        int n = Math.min(MAX_ADS_TO_SERVE, ads.size());
        responseObserver.onNext({{op}}Response.newBuilder().addAllAds(ads.subList(0, n)).build());
        responseObserver.onCompleted();
    } catch (StatusRuntimeException e) {
        logger.warn("{{op}} Failed with status {}", e.getStatus());
        responseObserver.onError(e);
    }
}
""",
)

T["csharp"] = {
    "handler": (
        "src/services/{{cls}}.cs",
        """
// {{cls}}.{{op}}: handles {{route}} using {{main}}.
public override async Task<{{op}}Response> {{op}}({{op}}Request request, ServerCallContext context)
{
    var activity = Activity.Current;
    activity?.SetTag("app.user.id", request.UserId);
    try
    {
        var result = await _{{main_var}}.{{main_op}}Async(request.UserId);
        return new {{op}}Response { Items = { result } };
    }
    catch (RpcException ex)
    {
        _logger.LogError(ex, "{{op}} failed calling {{main}}");
        throw new RpcException(new Status(StatusCode.FailedPrecondition,
            $"Can't access {{main}}. {ex}"));
    }
}
""",
    ),
    "handler_nodep": (
        "src/services/{{cls}}.cs",
        """
// {{cls}}.{{op}}: handles {{route}}.
public override async Task<{{op}}Response> {{op}}({{op}}Request request, ServerCallContext context)
{
    var items = new List<Item>();
    foreach (var batch in _repository.Pages(pageSize: 50))
    {
        if (batch.Count == 0) break;
        items.AddRange(batch);
    }
    _logger.LogInformation("{{op}} returned {Count} items", items.Count);
    return await Task.FromResult(new {{op}}Response { Items = { items } });
}
""",
    ),
    "client": (
        "{{csharp_client_path}}",
        """
// {{main_cls}} access for {{svc}}; connect timeout from {{MAIN}}_TIMEOUT_MS.
private void EnsureConnected()
{
    if (_connection != null && _connection.IsConnected) return;
    var options = ConfigurationOptions.Parse(_addr);   // {{MAIN}}_ADDR
    options.ConnectTimeout = _timeoutMs;
    options.ConnectRetry = {{main_retries}} + 1;
    options.AbortOnConnectFail = false;
    _connection = ConnectionMultiplexer.Connect(options);
    if (!_connection.IsConnected)
    {
        _logger.LogError("Wasn't able to connect to {{main}}");
        throw new ApplicationException("Wasn't able to connect to {{main}}");
    }
}
""",
    ),
    "logic": (
        "src/{{cls}}Logic.cs",
        """
// {{cls}}Logic: business rules behind {{op2}}.
public IReadOnlyList<Item> {{op2}}(string key)
{
    if (_cache.TryGetValue(key, out var entry) &&
        DateTime.UtcNow - entry.LoadedAt < TimeSpan.FromSeconds(_cacheTtlS))
    {
        return entry.Items;
    }
    var items = _loader(key) ?? new List<Item>();
    _cache[key] = new CacheEntry(items, DateTime.UtcNow);
    return items;
}
""",
    ),
    "config": (
        "{{csharp_config_path}}",
        """
// {{svc}} configuration (environment variables).
var builder = WebApplication.CreateBuilder(args);
int Port = EnvInt("{{port_key}}", {{port}});
int WorkerThreads = EnvInt("WORKER_THREADS", {{threads}});
int CacheTtlS = EnvInt("CACHE_TTL_S", {{ttl_default}});
ThreadPool.SetMinThreads(WorkerThreads, WorkerThreads);
{{dep_lines}}
builder.Services.AddGrpc();
builder.Services.AddSingleton(new StoreOptions(Port, CacheTtlS));
""",
    ),
}

T["node"] = {
    "handler": (
        "server.js",
        """
// {{op_lc}}: handles {{route}} for {{svc}} and calls {{main}}.
async function {{op_lc}}(call, callback) {
  const span = opentelemetry.trace.getActiveSpan();
  try {
    const upstream = await {{main_var}}Client.{{main_op_lc}}(call.request);
    span?.setAttribute('app.{{svc_file}}.items', upstream.items.length);
    callback(null, { items: upstream.items });
  } catch (err) {
    logger.warn({ err }, '{{op_lc}} failed calling {{main}}');
    span?.recordException(err);
    callback({ code: grpc.status.INTERNAL, message: err.message });
  }
}
""",
    ),
    "handler_nodep": (
        "server.js",
        """
// {{op_lc}}: handles {{route}} for {{svc}}.
function {{op_lc}}(call, callback) {
  const request = call.request;
  logger.info({ request }, '{{op_lc}} request received');
  try {
    const result = {{op2_lc}}(request);
    if (!result) {
      throw new Error('{{op_words}} produced no result');
    }
    callback(null, result);
  } catch (err) {
    logger.warn({ err }, '{{op_lc}} failed');
    callback({ code: grpc.status.INTERNAL, message: err.message });
  }
}
""",
    ),
    "client": (
        "{{main_file}}_client.js",
        """
// client for {{main}}: timeout {{MAIN}}_TIMEOUT_MS, {{main_retries}} retries.
async function {{main_op_lc}}(request) {
  const { addr, timeoutMs } = config.downstreams['{{main}}'];
  let lastErr;
  for (let attempt = 0; attempt <= {{main_retries}}; attempt++) {
    const deadline = new Date(Date.now() + timeoutMs);
    try {
      return await promisify(stub.{{main_op_lc}}.bind(stub))(request, { deadline });
    } catch (err) {
      lastErr = err;
      logger.warn({ addr, attempt, err: err.message }, '{{main}} call failed');
    }
  }
  throw lastErr;
}
""",
    ),
    "logic": (
        "{{logic_file}}.js",
        """
// {{op2_lc}}: business logic of {{svc}}.
function {{op2_lc}}(request) {
  const amount = request.amount || { units: 0, nanos: 0 };
  if (amount.units < 0 || amount.nanos < 0) {
    throw new Error('invalid amount');
  }
  const cached = cache.get(request.key);
  if (cached && Date.now() - cached.at < config.cacheTtlS * 1000) {
    return cached.value;
  }
  const value = compute(request);
  cache.set(request.key, { value, at: Date.now() });
  return value;
}
""",
    ),
    "config": (
        "config.js",
        """
// {{svc}} configuration, read once at start-up.
const env = (k, d) => (process.env[k] !== undefined ? process.env[k] : d);
module.exports = {
  port: Number(env('PORT', '{{port}}')),
  workerThreads: Number(env('WORKER_THREADS', '{{threads}}')),
  cacheTtlS: Number(env('CACHE_TTL_S', '{{ttl_default}}')),
  downstreams: {
{{dep_lines}}
  },
};
""",
    ),
}

T["ts"] = {
    "handler": (
        "pages/api/checkout.ts",
        """
// POST /api/checkout: places the order through {{main_checkout}}.
const handler = async ({ method, body, query }: NextApiRequest, res: NextApiResponse) => {
  if (method !== 'POST') {
    return res.status(405).send('');
  }
  const { currencyCode = 'USD' } = query;
  try {
    const orderResult = await CheckoutGateway.placeOrder(body as PlaceOrderRequest);
    const items = await Promise.all(orderResult.items.map(i => ProductCatalogService.getProduct(i.item?.productId || '', currencyCode as string)));
    return res.status(200).json({ ...orderResult, items });
  } catch (err) {
    logger.error({ err }, 'placeOrder failed');
    return res.status(500).json({ error: String(err) });
  }
};
export default InstrumentationMiddleware(handler);
""",  # noqa: E501 (verbatim TypeScript source excerpt)
    ),
    "client": (
        "gateways/rpc/{{main_cls}}.gateway.ts",
        """
// gRPC gateway from frontend to {{main}}; deadline from {{MAIN}}_TIMEOUT_MS.
const { addr, timeoutMs } = config.downstreams['{{main}}'];
const client = new {{main_cls}}ServiceClient(addr, ChannelCredentials.createInsecure());
const deadline = () => new Date(Date.now() + timeoutMs);

const {{main_cls}}Gateway = () => ({
  {{main_op_lc}}(id: string) {
    return new Promise<Product>((resolve, reject) =>
      client.{{main_op_lc}}({ id }, new Metadata(), { deadline: deadline() }, (error, response) =>
        error ? reject(error) : resolve(response)
      )
    );
  },
});
export default {{main_cls}}Gateway();
""",
    ),
    "config": (
        "utils/config.ts",
        """
// frontend server-side configuration (environment).
const env = (k: string, d: string) => process.env[k] ?? d;
export const config = {
  port: Number(env('FRONTEND_PORT', '{{port}}')),
  workerThreads: Number(env('WORKER_THREADS', '{{threads}}')),
  downstreams: {
{{dep_lines}}
  } as Record<string, { addr: string; timeoutMs: number }>,
};
""",
    ),
}

T["python"] = {
    "handler": (
        "{{py_server}}",
        """
# {{op}}: handles {{route}} for {{svc}}; calls {{main}}.
def {{op_snake}}(self, request, context):
    max_responses = int(os.environ.get("MAX_RESPONSES", "5"))
    try:
        response = {{main_snake}}_client.{{main_op_snake}}(request)
    except {{py_err}} as err:
        logger.warning("%s: %s call failed: %s", "{{op}}", "{{main}}", err)
        context.abort(grpc.StatusCode.UNAVAILABLE, "{{main}} unavailable")
    ids = [item.id for item in response.items if item.id not in request.exclude_ids]
    picked = random.sample(ids, min(max_responses, len(ids)))
    logger.info("[{{op}}] returned %d items", len(picked))
    return pb.{{op}}Response(ids=picked)
""",
    ),
    "handler_nodep": (
        "{{py_server}}",
        """
# {{op}}: handles {{route}} for {{svc}}.
def {{op_snake}}(self, request, context):
    logger.info("[{{op}}] request %s", request.id)
    try:
        result = logic.{{op2_snake}}(request)
    except ValueError as err:
        logger.error("[{{op}}] bad request: %s", err)
        context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
    if result is None:
        context.abort(grpc.StatusCode.INTERNAL, "{{op_words}} failed")
    return result
""",
    ),
    "client": (
        "{{main_snake}}_client.py",
        """
# client for {{main}} ({{main_proto}}); timeout from {{MAIN}}_TIMEOUT_MS.
def {{main_op_snake}}(request, retries={{main_retries}}):
    dep = config.DOWNSTREAMS["{{main}}"]
    last_err = None
    for attempt in range(retries + 1):
        try:
            return _stub.{{main_op}}(request, timeout=dep.timeout_ms / 1000.0)
        except grpc.RpcError as err:
            last_err = err
            logger.warning("%s attempt %d failed: %s", "{{main}}", attempt + 1, err.code())
            time.sleep(0.05 * (attempt + 1))
    raise last_err
""",
    ),
    "logic": (
        "logic.py",
        """
# {{op2_snake}}: business logic of {{svc}} with a TTL cache.
_cache = {}

def {{op2_snake}}(request):
    key = request.id
    hit = _cache.get(key)
    if hit and time.time() - hit[1] < config.CACHE_TTL_S:
        return hit[0]
    value = _build(request)
    if value is None:
        raise ValueError("cannot build response for %s" % key)
    _cache[key] = (value, time.time())
    return value
""",
    ),
    "config": (
        "config.py",
        """
# {{svc}} configuration (environment variables).
import os
from collections import namedtuple

Downstream = namedtuple("Downstream", "addr timeout_ms")
PORT = int(os.environ.get("PORT", "{{port}}"))
WORKER_THREADS = int(os.environ.get("WORKER_THREADS", "{{threads}}"))
CACHE_TTL_S = int(os.environ.get("CACHE_TTL_S", "{{ttl_default}}"))
DOWNSTREAMS = {
{{dep_lines}}
}
""",
    ),
}

T["kotlin"] = {
    "handler": (
        "src/main/kotlin/frauddetection/main.kt",
        """
// fraud-detection: consumes topic 'orders' from {{main}} and scores each order.
fun main() {
    val consumer = createConsumer(Config.addr("{{main}}"), Config.timeoutMs("{{main}}"))
    consumer.subscribe(listOf(TOPIC))
    while (true) {
        val records = consumer.poll(Duration.ofMillis(Config.timeoutMs("{{main}}").toLong()))
        records.forEach { record ->
            if (FlagClient.getIntValue("kafkaQueueProblems", 0) > 0) {
                logger.info("FeatureFlag 'kafkaQueueProblems' is enabled, sleeping 1 second")
                Thread.sleep(1000)
            }
            val order = OrderResult.parseFrom(record.value())
            logger.info("Consumed record with orderId: ${order.orderId}")
        }
        consumer.commitSync()
    }
}
""",
    ),
    "client": (
        "src/main/kotlin/frauddetection/Consumer.kt",
        """
// Kafka consumer factory for {{main}}; request timeout from {{MAIN}}_TIMEOUT_MS.
fun createConsumer(addr: String, timeoutMs: Int): KafkaConsumer<String, ByteArray> {
    val props = Properties()
    props[ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG] = addr
    props[ConsumerConfig.GROUP_ID_CONFIG] = GROUP_ID
    props[ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG] = timeoutMs
    props[ConsumerConfig.MAX_POLL_RECORDS_CONFIG] = 100
    props[ConsumerConfig.AUTO_OFFSET_RESET_CONFIG] = "earliest"
    props[ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG] = StringDeserializer::class.java
    props[ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG] = ByteArrayDeserializer::class.java
    return KafkaConsumer(props)
}
""",
    ),
    "config": (
        "src/main/kotlin/frauddetection/Config.kt",
        """
// fraud-detection configuration (environment variables).
object Config {
    private val ADDR = HashMap<String, String>()
    private val TIMEOUT_MS = HashMap<String, Int>()
    val WORKER_THREADS = env("WORKER_THREADS", "{{threads}}").toInt()
    init {
{{dep_lines}}
    }
    fun addr(dep: String) = ADDR.getValue(dep)
    fun timeoutMs(dep: String) = TIMEOUT_MS.getValue(dep)
    private fun env(k: String, d: String) = System.getenv(k) ?: d
}
""",
    ),
}

T["ruby"] = {
    "handler_nodep": (
        "email_server.rb",
        """
# POST /send_order_confirmation: renders and sends the confirmation mail.
post "/send_order_confirmation" do
  data = JSON.parse(request.body.read, object_class: OpenStruct)
  span = OpenTelemetry::Trace.current_span
  span.set_attribute("app.order.id", data.order.order_id)
  begin
    send_email(data)
  rescue StandardError => e
    logger.error("send_order_confirmation failed: #{e.message}")
    halt 500, "failed to send confirmation"
  end
  status 200
end
""",
    ),
    "logic": (
        "mailer.rb",
        """
# send_email: builds the confirmation body and delivers it with the test mailer.
def send_email(data)
  multiplier = $flags.get_number("emailMemoryLeak", default: 0)
  body = erb(:confirmation, locals: { order: data.order })
  body += " " * (body.length * (multiplier - 1)) if multiplier > 1
  Pony.mail(
    to: data.email,
    from: "noreply@example.com",
    subject: "Your confirmation email",
    body: body,
    via: :test
  )
  Mail::TestMailer.deliveries.clear if multiplier.zero?
end
""",
    ),
    "config": (
        "config.rb",
        """
# email service configuration (environment variables).
PORT = ENV.fetch("EMAIL_PORT", "{{port}}").to_i
WORKER_THREADS = ENV.fetch("WORKER_THREADS", "{{threads}}").to_i
DOWNSTREAMS = {
{{dep_lines}}
}.freeze
set :port, PORT
set :bind, "0.0.0.0"
set :server_settings, { max_threads: WORKER_THREADS }
""",
    ),
}

T["php"] = {
    "handler_nodep": (
        "app/routes.php",
        """
<?php
// POST /getquote: quotes shipping cost for a number of items.
$app->post('/getquote', function (Request $request, Response $response) {
    $body = json_decode($request->getBody()->getContents(), true);
    $numberOfItems = intval($body['numberOfItems'] ?? 0);
    if ($numberOfItems <= 0) {
        $response->getBody()->write(json_encode(['error' => 'numberOfItems must be > 0']));
        return $response->withStatus(400);
    }
    $quote = calculateQuote($numberOfItems);
    $response->getBody()->write(json_encode($quote));
    return $response->withHeader('Content-Type', 'application/json');
});
""",
    ),
    "logic": (
        "app/quote.php",
        """
<?php
// calculateQuote: cost per item plus a fixed handling fee.
function calculateQuote(int $numberOfItems): float
{
    $costPerItem = 8.90;
    $quote = 0.0;
    for ($i = 0; $i < $numberOfItems; $i++) {
        $quote += $costPerItem;
    }
    $quote = round($quote + 5.0, 2);
    $span = Span::getCurrent();
    $span->setAttribute('app.quote.items.count', $numberOfItems);
    $span->setAttribute('app.quote.cost.total', $quote);
    return $quote;
}
""",
    ),
    "config": (
        "app/settings.php",
        """
<?php
// quote service settings (environment variables).
return [
    'port' => (int) (getenv('QUOTE_PORT') ?: {{port}}),
    'worker_threads' => (int) (getenv('WORKER_THREADS') ?: {{threads}}),
    'downstreams' => [
{{dep_lines}}
    ],
    'displayErrorDetails' => false,
    'logError' => true,
];
""",
    ),
}

T["cpp"] = {
    "handler_nodep": (
        "src/server.cpp",
        """
// CurrencyService::Convert: converts between currencies via EUR rates.
Status Convert(ServerContext* context, const CurrencyConversionRequest* request, Money* reply) override {
  auto span = get_tracer("currency")->StartSpan("Convert");
  const auto& from = request->from();
  auto it_from = currency_conversion.find(from.currency_code());
  auto it_to = currency_conversion.find(request->to_code());
  if (it_from == currency_conversion.end() || it_to == currency_conversion.end()) {
    span->SetStatus(StatusCode::kError, "unsupported currency");
    return Status(grpc::StatusCode::INVALID_ARGUMENT, "unsupported currency");
  }
  double euros = (from.units() + from.nanos() / 1e9) / it_from->second;
  double result = euros * it_to->second;
  SetMoney(reply, request->to_code(), result);
  span->End();
  return Status::OK;
}
""",
    ),
    "logic": (
        "src/currency_rates.cpp",
        """
// LoadRates: reads the static EUR-based conversion table, cached for cfg.cache_ttl_s.
const std::unordered_map<std::string, double>& LoadRates(const Config& cfg) {
  static std::unordered_map<std::string, double> rates;
  static std::chrono::steady_clock::time_point loaded;
  auto now = std::chrono::steady_clock::now();
  if (!rates.empty() && now - loaded < std::chrono::seconds(cfg.cache_ttl_s)) {
    return rates;
  }
  rates.clear();
  for (const auto& [code, rate] : ParseRatesFile("currency_conversion.json")) {
    if (rate <= 0) continue;
    rates[code] = rate;
  }
  loaded = now;
  return rates;
}
""",
    ),
    "config": (
        "src/config.cpp",
        """
// LoadConfig: currency service configuration from the environment.
Config LoadConfig() {
  Config cfg;
  cfg.port = std::stoi(EnvOr("CURRENCY_PORT", "{{port}}"));
  cfg.worker_threads = std::stoi(EnvOr("WORKER_THREADS", "{{threads}}"));
  cfg.cache_ttl_s = std::stoi(EnvOr("CACHE_TTL_S", "{{ttl_default}}"));
{{dep_lines}}
  cfg.ipv6_enabled = EnvOr("IPV6_ENABLED", "false") == "true";
  return cfg;
}
""",
    ),
}

T["rust"] = {
    "handler": (
        "src/shipping_service.rs",
        """
// POST /get-quote: asks {{main}} for a quote and converts it to Money.
pub async fn get_quote(req: web::Json<GetQuoteRequest>, cfg: web::Data<Config>) -> HttpResponse {
    let items: u32 = req.items.iter().map(|i| i.quantity).sum();
    if items == 0 {
        return HttpResponse::BadRequest().body("no items in request");
    }
    match request_quote(items, &cfg).await {
        Ok(quote) => HttpResponse::Ok().json(GetQuoteResponse { cost_usd: to_money(quote) }),
        Err(err) => {
            error!(error = %err, "failed to get quote from {{main}}");
            HttpResponse::InternalServerError().body(err.to_string())
        }
    }
}
""",
    ),
    "client": (
        "src/shipping_service/quote.rs",
        """
// request_quote: POST {{main_route}} on {{main}}, timeout {{MAIN}}_TIMEOUT_MS.
pub async fn request_quote(count: u32, cfg: &Config) -> Result<f64, Box<dyn Error>> {
    let dep = cfg.downstream("{{main}}");
    let url = format!("http://{}{{main_route}}", dep.addr);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(dep.timeout_ms))
        .build()?;
    let mut last_err = None;
    for _attempt in 0..=cfg.retries("{{main}}") { // {{main_retries}} retries
        match client.post(&url).json(&json!({ "numberOfItems": count })).send().await {
            Ok(resp) => return Ok(resp.text().await?.parse::<f64>()?),
            Err(e) => last_err = Some(e),
        }
    }
    Err(Box::new(last_err.unwrap()))
}
""",
    ),
    "config": (
        "src/config.rs",
        """
// Config::from_env: shipping service configuration.
impl Config {
    pub fn from_env() -> Result<Self, Box<dyn Error>> {
        let port: u16 = env_or("SHIPPING_PORT", "{{port}}").parse()?;
        let worker_threads: usize = env_or("WORKER_THREADS", "{{threads}}").parse()?;
        let downstreams = vec![
{{dep_lines}}
        ];
        Ok(Config { port, worker_threads, downstreams })
    }
}
""",
    ),
}

T["envoy"] = {
    "handler": (
        "envoy.tmpl.yaml",
        """
# routes of the frontend-proxy listener (port ${ENVOY_PORT})
route_config:
  virtual_hosts:
    - name: frontend
      domains: ["*"]
      routes:
        - match: { prefix: "/images/" }
          route: { cluster: image-provider, timeout: ${IMAGE_PROVIDER_TIMEOUT_MS}ms }
        - match: { prefix: "/flagservice/" }
          route: { cluster: flagservice, prefix_rewrite: "/", timeout: ${FLAGD_TIMEOUT_MS}ms }
        - match: { prefix: "/" }
          route: { cluster: frontend, timeout: ${FRONTEND_TIMEOUT_MS}ms }
http_filters:
  - name: envoy.filters.http.fault
    typed_config:
      max_active_faults: 100
      delay: { header_delay: {}, percentage: { numerator: 100 } }
""",
    ),
    "client": (
        "clusters.tmpl.yaml",
        """
# upstream clusters of frontend-proxy
clusters:
  - name: frontend
    type: STRICT_DNS
    connect_timeout: 0.25s
    lb_policy: ROUND_ROBIN
    outlier_detection: { consecutive_5xx: 5, base_ejection_time: 30s }
    load_assignment:
      cluster_name: frontend
      endpoints:
        - lb_endpoints:
            - endpoint: { address: { socket_address: { address: ${FRONTEND_HOST}, port_value: ${FRONTEND_PORT} } } }
  - name: image-provider
    type: STRICT_DNS
    connect_timeout: 0.25s
""",  # noqa: E501 (verbatim Envoy config source excerpt)
    ),
    "config": (
        "entrypoint.sh",
        """
#!/bin/sh
# renders envoy.yaml from the templates using the container environment
set -eu
{{dep_lines}}
: "${WORKER_THREADS:={{threads}}}"
export FRONTEND_HOST="${FRONTEND_ADDR%:*}" FRONTEND_PORT="${FRONTEND_ADDR##*:}"
export IMAGE_PROVIDER_HOST="${IMAGE_PROVIDER_ADDR%:*}" IMAGE_PROVIDER_PORT="${IMAGE_PROVIDER_ADDR##*:}"
export FLAGD_HOST="${FLAGD_ADDR%:*}" FLAGD_PORT="${FLAGD_ADDR##*:}"
cat /etc/envoy/envoy.tmpl.yaml /etc/envoy/clusters.tmpl.yaml | envsubst > /etc/envoy/envoy.yaml
exec envoy -c /etc/envoy/envoy.yaml --concurrency "${WORKER_THREADS}"
""",
    ),
}

T["nginx_ui"] = {
    "handler": (
        "nginx.conf",
        """
# ts-ui-dashboard: static UI plus the API proxy to {{main}}
worker_processes  ${WORKER_THREADS};
events { worker_connections 1024; }
http {
    include       mime.types;
    keepalive_timeout  65;
    server {
        listen       {{port}};
        location / { root /usr/share/nginx/html; index index.html; }
        location /api/v1/ {
            proxy_pass http://{{main_upstream}};
            proxy_read_timeout ${{{MAIN}}_TIMEOUT_MS}ms;
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries {{main_retries_plus1}};
        }
    }
}
""",
    ),
    "client": (
        "static/js/api.js",
        """
// browser-side API helper: every page calls the gateway under /api/v1/
function apiCall(method, path, body, onSuccess) {
    $.ajax({
        type: method,
        url: "/api/v1/" + path,
        contentType: "application/json",
        headers: { Authorization: "Bearer " + sessionStorage.getItem("client_token") },
        data: body ? JSON.stringify(body) : undefined,
        timeout: 60000,
        success: function (result) {
            if (result.status === 1) { onSuccess(result.data); }
            else { alert(result.msg); }
        },
        error: function (xhr) { alert("request failed: " + xhr.status); }
    });
}
""",
    ),
    "config": (
        "docker-entrypoint.sh",
        """
#!/bin/sh
# renders nginx.conf from the environment before starting nginx
set -eu
{{dep_lines}}
: "${WORKER_THREADS:={{threads}}}"
export {{MAIN}}_ADDR {{MAIN}}_TIMEOUT_MS WORKER_THREADS
envsubst '${{{MAIN}}_ADDR} ${{{MAIN}}_TIMEOUT_MS} ${WORKER_THREADS}' \\
  < /etc/nginx/nginx.conf.template > /etc/nginx/nginx.conf
nginx -t
exec nginx -g 'daemon off;'
""",
    ),
}

T["nginx_images"] = {
    "handler_nodep": (
        "nginx.conf.template",
        """
# image-provider: serves product images
server {
    listen ${IMAGE_PROVIDER_PORT};
    location /images/ {
        root /static;
        expires 1h;
        add_header Cache-Control "public, max-age=3600";
        try_files $uri =404;
    }
    location /status { return 200 'OK'; }
    access_log /dev/stdout otel;
}
""",
    ),
    "logic": (
        "conf.d/otel.conf",
        """
# OpenTelemetry module settings for image-provider
load_module modules/ngx_otel_module.so;
otel_exporter {
    endpoint ${OTEL_COLLECTOR_HOST}:${OTEL_COLLECTOR_PORT_GRPC};
    interval 5s;
    batch_size 512;
}
otel_service_name image-provider;
otel_trace on;
log_format otel '$remote_addr [$time_local] "$request" $status '
                '$body_bytes_sent $request_time "$http_user_agent"';
""",
    ),
    "config": (
        "docker-entrypoint.sh",
        """
#!/bin/sh
# renders the nginx config from the container environment
set -eu
: "${IMAGE_PROVIDER_PORT:={{port}}}"
: "${WORKER_THREADS:={{threads}}}"
export IMAGE_PROVIDER_PORT WORKER_THREADS
envsubst '${IMAGE_PROVIDER_PORT} ${OTEL_COLLECTOR_HOST} ${OTEL_COLLECTOR_PORT_GRPC}' \\
  < /etc/nginx/nginx.conf.template > /etc/nginx/conf.d/default.conf
sed -i "s/^worker_processes .*/worker_processes ${WORKER_THREADS};/" /etc/nginx/nginx.conf
exec nginx -g 'daemon off;'
""",
    ),
}

T["flagd"] = {
    "handler_nodep": (
        "demo.flagd.json",
        """
{
  "$schema": "https://flagd.dev/schema/v0/flags.json",
  "flags": {
    "productCatalogFailure": {
      "description": "Fail product catalog service on a specific product",
      "state": "ENABLED",
      "variants": { "on": true, "off": false },
      "defaultVariant": "off"
    },
    "paymentFailure": {
      "description": "Fail payment service charge requests n%",
      "state": "ENABLED",
      "variants": { "100%": 1, "50%": 0.5, "10%": 0.1, "off": 0 },
      "defaultVariant": "off"
    }
  }
}
""",
    ),
    "logic": (
        "core/pkg/evaluator/json.go",
        """
// ResolveBooleanValue evaluates a boolean flag from the loaded flag set.
func (je *JSON) ResolveBooleanValue(ctx context.Context, reqID, flagKey string, evalCtx map[string]any) (bool, string, string, error) {
	flag, ok := je.store.Get(ctx, flagKey)
	if !ok {
		return false, "", model.ErrorReason, errors.New(model.FlagNotFoundErrorCode)
	}
	if flag.State == Disabled {
		return false, "", model.ErrorReason, errors.New(model.FlagDisabledErrorCode)
	}
	variant, ok := flag.Variants[flag.DefaultVariant].(bool)
	if !ok {
		return false, "", model.ErrorReason, errors.New(model.TypeMismatchErrorCode)
	}
	je.Logger.DebugWithID(reqID, fmt.Sprintf("evaluated %s -> %s", flagKey, flag.DefaultVariant))
	return variant, flag.DefaultVariant, model.StaticReason, nil
}
""",  # noqa: E501 (verbatim Go source excerpt)
    ),
    "config": (
        "cmd/start.go",
        """
// start flags: flagd reads the flag file mounted from ConfigMap flagd-config.
func init() {
	flags := startCmd.Flags()
	flags.Int32P("port", "p", {{port}}, "port to listen on for flag evaluation")
	flags.Int32P("ofrep-port", "r", 8016, "port for the OFREP HTTP API")
	flags.StringSliceP("uri", "f", []string{"file:/etc/flagd/demo.flagd.json"}, "flag sources")
	flags.Int("worker-threads", envInt("WORKER_THREADS", {{threads}}), "concurrent evaluations")
	flags.String("metrics-exporter", os.Getenv("FLAGD_METRICS_EXPORTER"), "otel or prometheus")
	flags.Duration("sync-interval", 5*time.Second, "how often file sources are re-read")
	_ = viper.BindPFlags(flags)
}
""",
    ),
}

# datastores / queues: one config file
STORE_FILES: dict[str, tuple[str, str]] = {
    "redis": (
        "redis.conf",
        """
# redis.conf for {{svc}}
port {{port}}
bind 0.0.0.0
maxclients {{threads_x}}
maxmemory {{maxmem}}mb
maxmemory-policy allkeys-lru
timeout 0
tcp-keepalive 300
save ""
appendonly no
""",
    ),
    "valkey": (
        "valkey.conf",
        """
# valkey.conf for {{svc}}
port {{port}}
bind 0.0.0.0
maxclients {{threads_x}}
maxmemory {{maxmem}}mb
maxmemory-policy allkeys-lru
timeout 0
tcp-keepalive 300
save ""
appendonly no
""",
    ),
    "postgres": (
        "postgresql.conf",
        """
# postgresql.conf for {{svc}}
listen_addresses = '*'
port = {{port}}
max_connections = {{threads_x}}
shared_buffers = {{buffers}}MB
work_mem = 4MB
statement_timeout = 30000
idle_in_transaction_session_timeout = 60000
log_min_duration_statement = 500
wal_level = minimal
max_wal_senders = 0
""",
    ),
    "mysql": (
        "my.cnf",
        """
# my.cnf for {{svc}}
[mysqld]
port = {{port}}
max_connections = 65535
innodb_buffer_pool_size = {{buffers}}M
wait_timeout = 28800
lock_wait_timeout = 50
innodb_lock_wait_timeout = 50
slow_query_log = 1
long_query_time = 1
thread_cache_size = {{threads}}
""",
    ),
    "kafka": (
        "server.properties",
        """
# server.properties for {{svc}} (KRaft mode)
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://:{{port}},CONTROLLER://:9093
advertised.listeners=PLAINTEXT://{{svc}}:{{port}}
controller.quorum.voters=1@{{svc}}:9093
num.network.threads={{net_threads}}
num.io.threads={{threads}}
num.partitions=1
log.retention.hours=1
offsets.topic.replication.factor=1
""",
    ),
    "rabbitmq": (
        "rabbitmq.conf",
        """
# rabbitmq.conf for {{svc}} (queues: email, food_delivery)
listeners.tcp.default = {{port}}
management.tcp.port = 15672
vm_memory_high_watermark.relative = 0.6
disk_free_limit.absolute = 50MB
channel_max = 2047
heartbeat = 60
consumer_timeout = 1800000
default_user = guest
loopback_users = none
""",
    ),
    "nacos": (
        "conf/application.properties",
        """
# application.properties for {{svc}} (cluster mode, MySQL-backed)
server.port={{port}}
nacos.standalone=false
spring.datasource.platform=mysql
db.num=1
db.url.0=jdbc:mysql://nacosdb-mysql-leader:3306/nacos?connectTimeout=1000&socketTimeout=3000
db.pool.config.maximumPoolSize={{threads}}
nacos.naming.distro.taskDispatchThreadCount={{net_threads}}
nacos.naming.clean.empty-service.interval=60000
nacos.core.auth.enabled=false
""",
    ),
}


SQL_CLIENT: dict[str, tuple[str, str]] = {
    "go": (
        "store.go",
        """
// {{main_op}} reads rows from {{main}}; every query is bounded by {{MAIN}}_TIMEOUT_MS.
func (s *store) {{main_op}}(ctx context.Context, req *pb.{{op}}Request) (*pb.{{op}}Response, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	rows, err := s.db.QueryContext(ctx, "SELECT id, name, description, picture, price_units, price_nanos "+
		"FROM {{table}} ORDER BY id LIMIT $1 OFFSET $2", s.pageSize, req.Offset)
	if err != nil {
		return nil, fmt.Errorf("query {{main}}: %w", err)
	}
	defer rows.Close()
	out := &pb.{{op}}Response{}
	for rows.Next() {
		item := &pb.Item{}
		if err := rows.Scan(&item.Id, &item.Name, &item.Description, &item.Picture, &item.Units, &item.Nanos); err != nil {
			return nil, fmt.Errorf("scan {{table}}: %w", err)
		}
		out.Items = append(out.Items, item)
	}
	return out, rows.Err()
}
""",  # noqa: E501 (verbatim Go source excerpt)
    ),
    "java": (
        "src/main/java/{{pkg_path}}/repository/{{entity_cls}}Repository.java",
        """
// {{entity_cls}}Repository: {{svc}} -> {{main}} (JDBC); query timeout from {{MAIN}}_TIMEOUT_MS.
public List<{{entity_cls}}> findAll(int pageSize) {
    jdbcTemplate.setQueryTimeout(Math.max(1, ClientConfig.TIMEOUT_MS.get("{{main}}") / 1000));
    List<{{entity_cls}}> result = new ArrayList<>();
    int offset = 0;
    while (true) {
        List<{{entity_cls}}> page = jdbcTemplate.query(
            "SELECT * FROM {{table}} ORDER BY id LIMIT ? OFFSET ?", rowMapper, pageSize, offset);
        result.addAll(page);
        if (page.size() < pageSize) {
            break;
        }
        offset += pageSize;
    }
    return result;
}
""",
    ),
    "python": (
        "{{main_snake}}_client.py",
        """
# database access for {{svc}} ({{main}}); statement timeout from {{MAIN}}_TIMEOUT_MS.
def {{main_op_snake}}(request, page_size=50):
    dep = config.DOWNSTREAMS["{{main}}"]
    host, port = dep.addr.split(":")
    rows = []
    with psycopg2.connect(host=host, port=int(port), dbname="otel", connect_timeout=max(1, dep.timeout_ms // 1000)) as conn:
        with conn.cursor() as cur:
            cur.execute("SET statement_timeout = %s", (dep.timeout_ms,))
            offset = 0
            while True:
                cur.execute("SELECT * FROM {{table}} WHERE product_id = %s LIMIT %s OFFSET %s",
                            (request.product_id, page_size, offset))
                batch = cur.fetchall()
                rows.extend(batch)
                if len(batch) < page_size:
                    break
                offset += page_size
    return rows
""",  # noqa: E501 (verbatim Python source excerpt)
    ),
    "node": (
        "db.js",
        """
// MySQL access for {{svc}} ({{main}}); query timeout from {{MAIN}}_TIMEOUT_MS.
const { addr, timeoutMs } = config.downstreams['{{main}}'];
const [host, port] = addr.split(':');
const pool = mysql.createPool({ host, port: Number(port), database: 'ts',
  connectionLimit: config.workerThreads, connectTimeout: timeoutMs });

async function {{main_op_lc}}(pageSize = 50) {
  const rows = [];
  for (let offset = 0; ; offset += pageSize) {
    const [batch] = await pool.query({ sql: 'SELECT * FROM {{table}} LIMIT ? OFFSET ?', timeout: timeoutMs },
      [pageSize, offset]);
    rows.push(...batch);
    if (batch.length < pageSize) break;
  }
  return rows;
}
""",
    ),
}
T["python_http"] = {
    **T["python"],
    "client": (
        "{{main_snake}}_client.py",
        """
# HTTP client for {{main}}; timeout from {{MAIN}}_TIMEOUT_MS, {{main_retries}} retries.
def {{main_op_snake}}(payload, retries={{main_retries}}):
    dep = config.DOWNSTREAMS["{{main}}"]
    url = "http://%s{{main_route}}" % dep.addr
    for attempt in range(retries + 1):
        try:
            resp = requests.post(url, json=payload, timeout=dep.timeout_ms / 1000.0)
            resp.raise_for_status()
            return resp.json()
        except requests.RequestException as err:
            logger.warning("%s attempt %d failed: %s", "{{main}}", attempt + 1, err)
            if attempt == retries:
                raise
            time.sleep(0.1 * (attempt + 1))
""",
    ),
}
T["java_gateway"] = {
    "handler": (
        "src/main/java/gateway/filter/DownstreamTimeoutFilter.java",
        """
// DownstreamTimeoutFilter: applies <SERVICE>_TIMEOUT_MS of the routed service to each proxied request.
@Override
public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
    Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
    String svc = route == null ? "" : route.getUri().getHost();  // e.g. {{main}}
    String prefix = svc.toUpperCase().replaceAll("[^A-Z0-9]", "_");
    int timeoutMs = ClientConfig.TIMEOUT_MS.getOrDefault(prefix, 2000);
    return chain.filter(exchange)
        .timeout(Duration.ofMillis(timeoutMs))
        .onErrorResume(TimeoutException.class, e -> {
            LOGGER.warn("[gateway][{} timed out after {} ms][{}]", svc, timeoutMs, exchange.getRequest().getPath());
            exchange.getResponse().setStatusCode(HttpStatus.GATEWAY_TIMEOUT);
            return exchange.getResponse().setComplete();
        });
}
""",  # noqa: E501 (verbatim Java source excerpt)
    ),
    "client": (
        "src/main/resources/application.yml",
        """
# gateway routes (excerpt: the busiest routes; {{route_count}} routes in total)
spring:
  cloud:
    gateway:
      httpclient:
        connect-timeout: 1000
        pool: { max-connections: ${WORKER_THREADS:{{threads}}} }
      routes:
{{gw_routes}}
""",
    ),
    "config": T["java"]["config"],
}
for _lang, _client in SQL_CLIENT.items():
    T[f"{_lang}_sql"] = {**T[_lang], "client": _client}

T["csharp_accounting"] = {
    "handler": (
        "src/Consumer.cs",
        """
// Consumer.ProcessMessage: stores every order from topic 'orders' in {{main}}.
private void ProcessMessage(Message<string, byte[]> message)
{
    try
    {
        var order = OrderResult.Parser.ParseFrom(message.Value);
        Log.OrderReceivedMessage(_logger, order);
        var entity = new OrderEntity { Id = order.OrderId };
        _dbContext.Orders.Add(entity);
        foreach (var item in order.Items)
        {
            _dbContext.CartItems.Add(new OrderItemEntity { OrderId = order.OrderId, ProductId = item.Item.ProductId });
        }
        _dbContext.SaveChanges();
    }
    catch (Exception ex)
    {
        _logger.LogError(ex, "Order parsing failed:");
    }
}
""",  # noqa: E501 (verbatim C# source excerpt)
    ),
    "client": (
        "src/DBContext.cs",
        """
// DBContext: EF Core context for {{main}}; command timeout from {{MAIN}}_TIMEOUT_MS.
protected override void OnConfiguring(DbContextOptionsBuilder optionsBuilder)
{
    var addr = Environment.GetEnvironmentVariable("{{MAIN}}_ADDR") ?? "{{main}}:5432";
    var timeoutMs = int.Parse(Environment.GetEnvironmentVariable("{{MAIN}}_TIMEOUT_MS") ?? "1000");
    var hostPort = addr.Split(':');
    var conn = $"Host={hostPort[0]};Port={hostPort[1]};Database=otel;Include Error Detail=true";
    optionsBuilder.UseNpgsql(conn, npgsql =>
    {
        npgsql.CommandTimeout(Math.Max(1, timeoutMs / 1000));
        npgsql.EnableRetryOnFailure({{main_retries}});
    });
}
""",
    ),
    "config": (
        "src/Program.cs",
        """
// accounting configuration (environment variables).
var builder = Host.CreateApplicationBuilder(args);
int WorkerThreads = EnvInt("WORKER_THREADS", {{threads}});
int CacheTtlS = EnvInt("CACHE_TTL_S", {{ttl_default}});
ThreadPool.SetMinThreads(WorkerThreads, WorkerThreads);
{{dep_lines}}
builder.Services.AddSingleton<Consumer>();
builder.Services.AddDbContext<DBContext>();
var app = builder.Build();
app.Services.GetRequiredService<Consumer>().StartListening();
""",
    ),
}


def render_store(store_key: str, ctx: dict) -> list[tuple[str, str]]:
    path, body = STORE_FILES[store_key]
    return [(fill(path, ctx).strip(), fill(body, ctx))]


def render_service(lang: str, ctx: dict) -> list[tuple[str, str]]:
    """Three (path, excerpt) pairs: handler, client-or-logic, config."""
    t = T[lang]
    has_main = ctx.get("main") is not None
    if has_main and ctx.get("in_proto") == "http" and "handler_http" in t:
        handler = t["handler_http"]
    elif not has_main and ctx.get("in_proto") == "grpc" and lang == "java":
        handler = JAVA_GRPC_HANDLER
    elif has_main and "handler" in t:
        handler = t["handler"]
    else:
        handler = t.get("handler_nodep") or t["handler"]
    if has_main and "client" in t:
        second = t["client"]
    else:
        second = t.get("logic") or t["client"]
    out = []
    for path, body in (handler, second, t["config"]):
        out.append((ctx.get("path_override", {}).get(path, fill(path, ctx).strip()), fill(body, ctx)))
    return out


def check_excerpt(text: str) -> None:
    n = len(text.rstrip("\n").split("\n"))
    if not MIN_LINES <= n <= MAX_LINES:
        raise ValueError(f"excerpt has {n} lines (want {MIN_LINES}-{MAX_LINES}):\n{text}")
