#!/usr/bin/python3
"""Cross-checks deploy/'s manifests, which a dry run cannot: the nightly CronJob's pod lands
on the node of the serve pod (podAffinity matches the Deployment's pod labels), both mount the
PVC pvc.yaml defines, the Service selects the serve pods and targets a port they name, serve
binds beyond loopback only with --token-env naming a variable its env fills from a Secret, and
the Job neither retries nor overlaps (the night's status is its verdict; one writer).
Usage: manifests_check.py SOURCE_DIR. Prints one FAIL line per problem, else PASS."""
import sys

import yaml

deploy = sys.argv[1] + "/deploy/"
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def load(name):
    with open(deploy + name) as f:
        return [d for d in yaml.safe_load_all(f) if d]


pvc = load("pvc.yaml")[0]
cron = load("cronjob.yaml")[0]
serve = {d["kind"]: d for d in load("serve.yaml")}
deployment, service = serve["Deployment"], serve["Service"]

serve_pod = deployment["spec"]["template"]
serve_labels = serve_pod["metadata"]["labels"]
check(deployment["spec"]["selector"]["matchLabels"].items() <= serve_labels.items(),
      "the Deployment's selector does not match its pod labels")
check(deployment["spec"]["strategy"]["type"] == "Recreate",
      "the Deployment must release the ReadWriteOnce volume before its next pod mounts it")
check(service["spec"]["selector"].items() <= serve_labels.items(),
      "the Service does not select the serve pods")
container = serve_pod["spec"]["containers"][0]
port_names = {p["name"] for p in container["ports"]}
check(all(p["targetPort"] in port_names for p in service["spec"]["ports"]),
      "the Service targets a port the serve container does not name")
args = container["args"]
check("serve" in args, "the serve Deployment does not run kvsweep serve")
bind = args[args.index("--bind") + 1] if "--bind" in args else "127.0.0.1"
if bind not in ("127.0.0.1", "::1", "localhost"):
    check("--token-env" in args, "serve binds " + bind + " without --token-env")
    if "--token-env" in args:
        var = args[args.index("--token-env") + 1]
        env = {e["name"]: e for e in container.get("env", [])}
        check(var in env and "secretKeyRef" in env[var].get("valueFrom", {}),
              "the token variable " + var + " is not filled from a Secret")
        check(var in env and not env[var]["valueFrom"]["secretKeyRef"].get("optional", False),
              "the token Secret must not be optional: serve would then refuse to start anyway")

job = cron["spec"]["jobTemplate"]["spec"]
pod = job["template"]["spec"]
check(cron["spec"]["concurrencyPolicy"] == "Forbid", "two nights may overlap (two writers)")
check(job["backoffLimit"] == 0 and pod["restartPolicy"] == "Never",
      "a failed night is retried: a regression would start a new sweep instead of failing")
terms = pod["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
check(any(t["topologyKey"] == "kubernetes.io/hostname" and
          t["labelSelector"]["matchLabels"].items() <= serve_labels.items() for t in terms),
      "the nightly pod is not held to the serve pod's node (ReadWriteOnce volume, SQLite WAL)")
for name, spec in (("cronjob", pod), ("serve", serve_pod["spec"])):
    claims = [v["persistentVolumeClaim"]["claimName"] for v in spec["volumes"]
              if "persistentVolumeClaim" in v]
    check(claims == [pvc["metadata"]["name"]], name + " does not mount the PVC pvc.yaml defines")
script = pod["containers"][0]["args"][0]
for step in ("run \"$SCENARIO\"", "compare --strict $COMPARE_ARGS \"$SCENARIO_NAME~1\" \"$SCENARIO_NAME\"",
             "history \"$SCENARIO_NAME\""):
    check(step in script, "the nightly script does not " + step.split()[0])

for f in failures:
    print("FAIL: " + f)
if not failures:
    print("PASS: deploy/ cronjob.yaml and serve.yaml fit together and with pvc.yaml")
sys.exit(1 if failures else 0)
