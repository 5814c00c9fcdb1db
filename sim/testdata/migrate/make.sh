#!/bin/bash
# make.sh BIN DIR [answers]: the state file, a snapshot and (with "answers")
# the answers of a server built from an earlier revision, on that state and
# on the snapshot restored, as the migration tests hold them
# (sim/migrate_test.go, state_migration_test.go); scripts/migration-check
# runs it all:
#
#   git archive 80e4a30 | tar -x -C old && (cd old && go build -o mock-v1 ./cmd/mockserver)   # schema 1
#   git archive 2338932 | tar -x -C old && (cd old && go build -o mock-v2 ./cmd/mockserver)   # schema 2
#   sim/testdata/migrate/make.sh old/mock-v1 DATA/schema-v1
#   sim/testdata/migrate/make.sh old/mock-v2 DATA/schema-v2 answers
#
# The server runs on fixture.json, the manual clock and seed 0, with
# http://mock.test as its public address; every file is gzipped (gzip -9n).
set -euo pipefail
bin=$1; out=$2; here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"; work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
u=http://127.0.0.1:$port
"$bin" --addr 127.0.0.1:$port --db "$work/state.db" --fixtures "$here/fixture.json" --clock manual --public-url http://mock.test >"$work/server.log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -sf -H 'Authorization: Bearer mk_test_migrate' $u/api/v1/account >/dev/null && break; sleep 0.1; done
K='Authorization: Bearer mk_test_migrate'
post() { curl -sS -X POST -H "$K" -H 'Content-Type: application/json' "$u$1" -d "$2" >> "$work/created.jsonl"; echo >> "$work/created.jsonl"; }
ctl() { curl -sS -X POST -H 'Content-Type: application/json' "$u$1" -d "$2" -o /dev/null; }
post /api/v1/generations '{"modality":"image","model_id":"imagen-4","prompt":"A Lighthouse at dusk, oil painting","aspect_ratio":"16:9"}'
post /api/v1/generations '{"modality":"image","model_id":"imagen-4","prompt":"two foxes in the snow","count":2}'
post /api/v1/generations '{"modality":"video","model_id":"veo-3-fast","prompt":"a paper boat on a river","duration":4}'
post /api/v1/generations '{"modality":"audio","model_id":"eleven-multilingual-v2","prompt":"Welcome to the migration test","voice":"ava"}'
post /api/v1/generations '{"modality":"3d","model_id":"meshy-5","prompt":"a small brass robot"}'
post /api/v1/generations '{"modality":"audio","track":"music","model_id":"stable-audio-2","prompt":"Calm piano for a rainy MORNING","duration":30}'
post /api/v1/uploads '{"image_url":"https://example.com/cat.png","title":"My Uploaded Cat"}'
ctl /_mock/clock/advance '{"seconds":30}'
post /api/v1/generations '{"modality":"image","model_id":"flux-2-pro","prompt":"Héron cendré au lever du soleil"}'
ctl /_mock/clock/advance '{"seconds":5}'
post /api/v1/generations '{"modality":"image","model_id":"imagen-4","prompt":"a queued lighthouse"}'
ctl /_mock/faults/fail-next '{}'
post /api/v1/generations '{"modality":"image","model_id":"seedream-4","prompt":"a failing lighthouse"}'
ctl /_mock/clock/advance '{"seconds":12}'
post /api/v1/generations '{"modality":"video","model_id":"kling-2.5-turbo","prompt":"Rain on a tin roof","duration":5}'
post /api/v1/generations '{"modality":"image","model_id":"imagen-4","prompt":"a second queued Lighthouse","count":3}'
ctl /_mock/clock/advance '{"seconds":7}'
curl -sS $u/_mock/snapshot -o "$work/snapshot.db"
# answers FILE: the answers of the server at $u to the requests the tests
# make, gzipped into FILE.
answers() {
  projects=$(curl -sS -H "$K" "$u/api/v1/projects" | jq -r '.data[].id' | head -2)
  paths="/api/v1/account /api/v1/projects /api/v1/assets?limit=50 /api/v1/assets?limit=7&starting_after=300 /api/v1/assets?limit=50&starting_after=250
    /api/v1/assets?kind=image&limit=50 /api/v1/assets?kind=video /api/v1/assets?kind=audio /api/v1/assets?kind=upload /api/v1/assets?kind=model3d
    /api/v1/assets?kind=voice /api/v1/assets?kind=music /api/v1/assets?status=queued /api/v1/assets?status=processing /api/v1/assets?status=completed&limit=20
    /api/v1/assets?status=failed /api/v1/assets?query=lighthouse /api/v1/assets?query=h%C3%A9ron /api/v1/assets?query=MORNING
    /api/v1/assets?kind=image&status=completed&query=a&limit=5 /api/v1/assets?kind=image&status=queued /api/v1/assets/301 /api/v1/assets/305 /api/v1/assets/12
    $(jq -r 'select(.object=="generation") | "/api/v1/generations/" + (.assets[0].id|tostring)' "$work/created.jsonl" | tr '\n' ' ')"
  for pr in $projects; do paths="$paths /api/v1/assets?project_id=$pr&limit=50 /api/v1/assets?project_id=$pr&kind=image&limit=3"; done
  python3 - "$u" $paths <<'PY' | gzip -9n > "$1"
import json, sys, urllib.error, urllib.request
u, paths, out = sys.argv[1], sys.argv[2:], []
for p in paths:
    req = urllib.request.Request(u + p, headers={"Authorization": "Bearer mk_test_migrate"})
    try:
        r = urllib.request.urlopen(req)
        status, body = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read().decode()
    out.append({"path": p, "status": status, "body": body})
print(json.dumps(out, indent=1, ensure_ascii=False))
PY
}
if [ "${3:-}" = answers ]; then
  answers "$out/answers.json.gz"
fi
kill $pid; wait $pid || true
gzip -9n < "$work/state.db" > "$out/state.db.gz"
gzip -9n < "$work/snapshot.db" > "$out/snapshot.db.gz"
if [ "${3:-}" = answers ]; then
  # The snapshot restored on a fresh server of the same fixture: a restore
  # moves file addresses on, so its answers are its own.
  "$bin" --addr 127.0.0.1:$port --db "$work/restored.db" --fixtures "$here/fixture.json" --clock manual --public-url http://mock.test >"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -sf -H "$K" $u/api/v1/account >/dev/null && break; sleep 0.1; done
  curl -sS -f -X PUT --data-binary @"$work/snapshot.db" -H 'Content-Type: application/octet-stream' $u/_mock/snapshot -o /dev/null
  answers "$out/answers-restored.json.gz"
  kill $pid; wait $pid || true
fi
