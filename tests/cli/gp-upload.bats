#!/usr/bin/env bats
# gp-upload against loopback servers started here (tests/servers/*.py): a Performance Studio
# agent API and a Pyroscope /ingest that follow reference/upload-apis.md §1.8 and §2.5, and
# a recording HTTP proxy.
load helpers

SERVERS="$GP_SOURCE_DIR/tests/servers"
TOKEN="s3cret-token-XYZ"

setup() {
  require_command python3
  cd "$BATS_TEST_TMPDIR"
  now=$(date -u +%Y-%m-%dT%H:%M:%S)
  printf '# {"containers": [], "metadata": {"hostname": "h1", "agent_version": "1.57.1", "spawn_time": "%s", "current_time": "%s", "run_arguments": {"profile_api_version": "v2"}}, "application_metadata_enabled": true, "sampling_frequency": 11}\n0;;python;main;work 7\n1;web;java;Main.run 3' "$now" "$now" > a.col
  cp a.col a.col.orig
  PIDS=()
}

teardown() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
}

# start_server NAME SCRIPT ARGS...: runs a server, waits for NAME.port, sets $port.
start_server() {
  local name=$1 script=$2
  shift 2
  rm -f "$name.port"
  python3 "$SERVERS/$script" --port-file "$name.port" --log "$name.log" "$@" 2>"$name.err" &
  PIDS+=($!)
  for _ in $(seq 100); do [ -s "$name.port" ] && break; sleep 0.1; done
  port=$(cat "$name.port")
}

start_studio() { start_server studio studio.py --store store --token "$TOKEN" "$@"; studio="http://127.0.0.1:$port"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# count METHOD PATH: requests the studio saw.
count() { python3 -c 'import json,sys; print(sum(1 for l in open("studio.log") if (e:=json.loads(l))["method"]==sys.argv[1] and e["path"]==sys.argv[2]))' "$1" "$2"; }

studio_upload() { gp-upload --token "$TOKEN" --service-name web --server-host "$studio" --retry-delay 0.1 "$@"; }

@test "studio: success sends the agent's request; the profile's stacks arrive unchanged" {
  start_studio
  run studio_upload -vv a.col
  assert_success
  refute_output --partial "$TOKEN"
  assert_equal "$(count GET /api/v1/health_check)" 1
  python3 - "$now" <<'PY'
import json, sys
e = [json.loads(l) for l in open("studio.log")][1]
h, b, q = e["headers"], e["body"], e["query"]
assert h["content-encoding"] == "gzip" and h["content-type"] == "application/json", h
assert h["gprofiler-api-key"] == "s3cret-token-XYZ" and h["gprofiler-service-name"] == "web"
assert q["key"] == "s3cret-token-XYZ" and q["service"] == "web" and q["version"], q
assert b["start_time"] == sys.argv[1] and b["end_time"] == sys.argv[1] and b["gpid"] == "", b
head, stacks = b["profile"].split("\n", 1)
assert stacks == "0;;python;main;work 7\n1;web;java;Main.run 3", stacks
md = json.loads(head[2:])["metadata"]
assert md["hostname"] == "h1" and md["agent_version"] == "1.57.1"
assert len(md["mac_address"]) == 17 and md["processors"] > 0, md
PY
  run find store/products/web/stacks -name "${now}_*.gz"
  assert_line --index 0 --regexp '.gz$'
  cmp a.col a.col.orig
}

@test "studio: gpid returned by the server is sent back, within a run and across runs via the spool" {
  start_studio
  run studio_upload --spool sp a.col a.col
  assert_success
  run studio_upload --spool sp a.col
  assert_success
  run python3 -c 'import json; print(" ".join(repr(json.loads(l)["body"]["gpid"]) for l in open("studio.log") if json.loads(l)["method"]=="POST"))'
  assert_output "'' 1001 1001"
  assert_equal "$(cat sp/gpid)" 1001
}

@test "studio: bad token fails at the health check, without retry, and is never printed" {
  start_studio
  run gp-upload -vv --token wrong-secret --service-name web --server-host "$studio" --retries 3 a.col
  assert_failure 1
  assert_output --partial "Invalid API key"
  refute_output --partial "wrong-secret"
  assert_equal "$(count GET /api/v1/health_check)" 1
  assert_equal "$(count POST /api/v2/profiles)" 0
}

@test "studio: metadata the Studio refuses is filled in; a bad header fails that file only (exit 3)" {
  start_studio
  printf 'python;main 5\n' > plain.col
  printf '# {not json\nx 1\n' > bad.col
  run studio_upload plain.col bad.col
  assert_failure 3
  assert_output --partial "cannot upload 'bad.col'"
  assert_equal "$(count POST /api/v2/profiles)" 1
  run find store/products/web/stacks -type f
  assert_success
  [ -n "$output" ]
}

@test "studio: 5xx answers are retried with back-off until the upload succeeds" {
  start_studio --fail 2
  run studio_upload -v --retries 3 a.col
  assert_success
  assert_output --partial "HTTP 500"
  assert_equal "$(count POST /api/v2/profiles)" 3
}

@test "studio: 5xx beyond the retries fails with exit 1" {
  start_studio --fail 10
  run studio_upload --retries 1 a.col
  assert_failure 1
  assert_equal "$(count POST /api/v2/profiles)" 2
}

@test "studio: a timeout is retried; without retries it fails" {
  start_studio --delay 3 --delay-count 1
  run studio_upload --timeout 1 --retries 0 a.col
  assert_failure 1
  assert_output --partial "timed out"
  run studio_upload --timeout 1 --retries 1 a.col
  assert_success
}

@test "studio: oversize body gets 413 and is not retried" {
  start_studio --max-content 100
  run studio_upload --retries 3 a.col
  assert_failure 1
  assert_output --partial "HTTP 413"
  assert_equal "$(count POST /api/v2/profiles)" 1
}

@test "studio: server down then up within the retries" {
  p=$(free_port)
  studio="http://127.0.0.1:$p"
  gp-upload --token "$TOKEN" --service-name web --server-host "$studio" --retries 6 --retry-delay 0.5 a.col 2>up.err &
  up=$!
  sleep 1
  start_studio --port "$p"
  wait "$up"
  assert_equal "$(count POST /api/v2/profiles)" 1
}

@test "studio: server down keeps a spool copy; the next run sends it and removes it" {
  studio="http://127.0.0.1:$(free_port)"
  run studio_upload --retries 0 --spool sp a.col
  assert_failure 1
  assert_output --partial "kept a copy"
  run ls sp
  assert_output --regexp '^[0-9]+-a.col$'
  cmp a.col a.col.orig
  # The copy is the profile with the times it was to be sent with in its header.
  cmp <(tail -n +2 a.col) <(tail -n +2 "sp/$output")
  grep -q "\"start_time\": \"$now\", \"end_time\": \"$now\"" "sp/$output"
  start_studio
  printf 'python;other 2\n' > b.col
  run studio_upload --spool sp b.col
  assert_success
  assert_equal "$(count POST /api/v2/profiles)" 2
  run ls sp
  assert_output "gpid"
  cmp a.col a.col.orig
}

@test "studio: https through https_proxy, with --ca-file or --no-verify" {
  require_command openssl
  openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
  start_studio --tls-cert cert.pem --tls-key key.pem
  studio="https://127.0.0.1:$port"
  start_server proxy proxy.py
  unset NO_PROXY no_proxy
  https_proxy="http://127.0.0.1:$port" run studio_upload --ca-file cert.pem a.col
  assert_success
  run cat proxy.log
  assert_line "CONNECT 127.0.0.1:$(cat studio.port)"
  HTTPS_PROXY="http://127.0.0.1:$port" run studio_upload --retries 0 a.col
  assert_failure 1
  HTTPS_PROXY="http://127.0.0.1:$port" run studio_upload --no-verify a.col
  assert_success
  assert_equal "$(count POST /api/v2/profiles)" 2
}

@test "pyroscope: folded body without header and prefix frames, name, labels, auth, tenant" {
  start_server pyro pyroscope.py --tenant-required --auth "Bearer ptok"
  run gp-upload --pyroscope "http://127.0.0.1:$port" --pyroscope-app web.cpu \
    --pyroscope-label env=prod --pyroscope-token ptok --pyroscope-tenant team a.col
  assert_success
  python3 <<'PY'
import json
e = json.loads(open("pyro.log").readline())
assert e["body"] == "python;main;work 7\njava;Main.run 3", e["body"]
q = e["query"]
assert q["name"] == "web.cpu{env=prod,hostname=h1}" and q["format"] == "folded", q
assert q["sampleRate"] == "11" and int(q["until"]) >= int(q["from"]), q
assert e["headers"]["x-scope-orgid"] == "team" and e["headers"]["authorization"] == "Bearer ptok"
PY
  run gp-upload --pyroscope "http://127.0.0.1:$port" --pyroscope-token ptok --retries 3 a.col
  assert_failure 1
  assert_output --partial "HTTP 401"
  assert_equal "$(wc -l < pyro.log)" 2
}

@test "pyroscope: basic auth, and large profiles split into several requests" {
  start_server pyro pyroscope.py --auth "Basic $(printf 'u:p' | base64)"
  for i in $(seq 200); do printf 'comm;frame_%04d;leaf 1\n' "$i"; done > big.folded
  run gp-upload --pyroscope "http://127.0.0.1:$port" --pyroscope-user u --pyroscope-password p \
    --pyroscope-chunk-bytes 1024 big.folded
  assert_success
  run python3 -c 'import json; ls=[json.loads(l) for l in open("pyro.log")]; print(len(ls) > 3, all(len(e["body"]) <= 1024 for e in ls), "\n".join(e["body"] for e in ls) + "\n" == open("big.folded").read())'
  assert_output "True True True"
}

@test "usage: a target is required, --token needs --service-name" {
  run gp-upload a.col
  assert_failure 2
  run gp-upload --token x a.col
  assert_failure 2
  run gp-upload --token x --service-name s --start-time yesterday a.col
  assert_failure 2
}

@test "studio: 429 is retried after its Retry-After; without retries the profile is spooled" {
  start_studio --fail 1 --fail-status 429 --retry-after 1
  run gp-upload --token "$TOKEN" --service-name web --server-host "$studio" -v --retry-delay 30 a.col
  assert_success
  assert_output --partial "HTTP 429: Too Many Requests; retry 1 in 1.00 s"
  assert_equal "$(count POST /api/v2/profiles)" 2
  start_studio --fail 1 --fail-status 429 --retry-after 1
  run studio_upload --retries 0 --spool sp a.col
  assert_failure 1
  assert_output --partial "kept a copy"
  [ "$(ls sp | grep -c 'a.col$')" -eq 1 ]
}

@test "studio: a spooled profile is sent later with its own start and end times, oldest first" {
  start_studio --fail 1 --fail-status 429
  run studio_upload --retries 0 --spool sp --start-time 2026-01-01T00:00:00 \
    --end-time 2026-01-01T00:01:00 a.col
  assert_failure 1
  printf 'python;other 2\n' > b.col
  run studio_upload --spool sp --start-time 2026-02-02T00:00:00 --end-time 2026-02-02T00:01:00 b.col
  assert_success
  python3 - <<'PY'
import json
posts = [json.loads(l) for l in open("studio.log") if json.loads(l)["method"] == "POST"]
spans = [(p["body"]["start_time"], p["body"]["end_time"]) for p in posts]
assert spans == [("2026-01-01T00:00:00", "2026-01-01T00:01:00"),
                 ("2026-01-01T00:00:00", "2026-01-01T00:01:00"),
                 ("2026-02-02T00:00:00", "2026-02-02T00:01:00")], spans
PY
}

@test "studio: while the server is down, later profiles wait behind the spooled ones, in order" {
  p=$(free_port)
  studio="http://127.0.0.1:$p"
  printf 'python;b 2\n' > b.col
  printf 'python;c 3\n' > c.col
  run studio_upload --retries 1 --spool sp --no-health-check a.col
  assert_failure 1
  run studio_upload --retries 1 --spool sp --no-health-check b.col
  assert_failure 1
  [ "$(ls sp/*.col | wc -l)" -eq 2 ]
  start_studio --port "$p"
  run studio_upload --spool sp c.col
  assert_success
  python3 - <<'PY'
import json
posts = [json.loads(l)["body"]["profile"] for l in open("studio.log") if json.loads(l)["method"] == "POST"]
last = [p.rstrip("\n").rsplit("\n", 1)[-1] for p in posts]
assert last == ["1;web;java;Main.run 3", "python;b 2", "python;c 3"], last
PY
  [ -z "$(ls sp/*.col 2>/dev/null)" ]
}

@test "studio: a spool over its bound drops the oldest profiles, counted in a warning" {
  studio="http://127.0.0.1:$(free_port)"
  for n in 1 2 3 4; do printf 'python;f%s 1\n' "$n" > "p$n.col"; done
  run studio_upload --retries 0 --spool sp --spool-max-bytes 30 p1.col p2.col p3.col p4.col
  assert_failure 1
  assert_output --partial "dropped the 1 oldest profile(s)"
  run cat sp/*.col
  assert_output --partial "f4"
  refute_output --partial "f1"
  [ "$(ls sp/*.col | wc -l)" -eq 2 ]
}

@test "token: GPROFILER_TOKEN or --token-file instead of argv; -vv hides URL credentials" {
  start_studio
  run env GPROFILER_TOKEN="$TOKEN" gp-upload --service-name web --server-host "$studio" a.col
  assert_success
  printf '%s\n' "$TOKEN" > token.txt
  chmod 600 token.txt
  run gp-upload --token-file token.txt --service-name web -vv \
    --server-host "http://agent:pa55w0rd@127.0.0.1:$port" a.col
  assert_success
  refute_output --partial "pa55w0rd"
  refute_output --partial "$TOKEN"
  assert_output --partial "http://***@127.0.0.1:$port/api/v2/profiles"
  assert_equal "$(count POST /api/v2/profiles)" 2
  run gp-upload --token-file token.txt --token x --service-name web --server-host "$studio" a.col
  assert_failure 2
}

@test "health check alone: gProfiler's messages for a refused key and an unreachable server" {
  start_studio
  run gp-upload --health-check --retries 0 --token "$TOKEN" --service-name web --server-host "$studio"
  assert_success
  assert_equal "$(count POST /api/v2/profiles)" 0
  run gp-upload --health-check --retries 0 --token wrong --service-name web --server-host "$studio"
  assert_failure 1
  assert_output --partial "gp-upload: error: Server error: HTTP 400: Invalid API key"
  run gp-upload --health-check --retries 0 --token "$TOKEN" --service-name web \
    --server-host "http://127.0.0.1:$(free_port)"
  assert_failure 1
  assert_output --partial "gp-upload: error: Failed to connect to server. It might be blocked by your security rules / firewall, or you might require a proxy to access it from your environment? Proxy used: none. Error: "
}
