"""Checks deploy/kubernetes against the image it runs (scripts/test, image step).

No kubectl or cluster here: this reads the manifests as YAML and holds them
to what the image and the binary are — its user, its port, the probe
routes it answers, every Secret it names defined, no secret value written.

    python check.py DIR IMAGE_UID
"""

import pathlib
import sys

import yaml


def load(folder):
    docs = []
    for path in sorted(pathlib.Path(folder).glob("*.yaml")):
        docs += [(path.name, d) for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def check(folder, uid):
    docs = load(folder)
    kinds = {}
    for name, doc in docs:
        kinds.setdefault(doc["kind"], []).append(doc)
    kust = kinds["Kustomization"][0]
    listed = set(kust["resources"])
    files = {name for name, doc in docs if doc["kind"] != "Kustomization"}
    assert listed == files, f"kustomization lists {sorted(listed)}, the folder has {sorted(files)}"

    deploy = kinds["Deployment"][0]
    spec = deploy["spec"]
    assert spec["replicas"] == 3, "three replicas"
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    pod = spec["template"]["spec"]
    ctx = pod["securityContext"]
    assert ctx["runAsNonRoot"] is True and ctx["runAsUser"] == uid, f"runs as the image's user {uid}"
    (container,) = pod["containers"]
    assert container["image"] == kust["images"][0]["name"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    (port,) = container["ports"]
    assert port["containerPort"] == 3000, "the image listens on 3000 (STREAMKEEPER_BIND)"
    probes = {k: container[k]["httpGet"]["path"] for k in ("startupProbe", "livenessProbe", "readinessProbe")}
    assert probes == {"startupProbe": "/healthz", "livenessProbe": "/healthz", "readinessProbe": "/readyz"}, probes
    assert "memory" in container["resources"]["limits"]

    secrets = {s["metadata"]["name"]: s for s in kinds["Secret"]}
    for secret in secrets.values():
        values = {**secret.get("stringData", {}), **secret.get("data", {})}
        assert all(v == "" for v in values.values()), f"{secret['metadata']['name']} carries a value"
    env = {e["name"]: e for e in container["env"]}
    for e in env.values():
        ref = e.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            assert ref["key"] in secrets[ref["name"]]["stringData"], ref
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    files_dir = mounts["secret-files"]
    files = secrets[volumes["secret-files"]["secret"]["secretName"]]["stringData"]
    assert env["STREAMKEEPER_CRED_DIRS"]["value"] == files_dir
    for key in ("STREAMKEEPER_AUDIT_KEY", "STREAMKEEPER_TOTP_KEY"):
        path = env[key]["value"].removeprefix("file:")
        assert path.startswith(files_dir + "/") and path.rsplit("/", 1)[1] in files, f"{key} names a mounted file"

    for other in kinds["Service"] + kinds["PodDisruptionBudget"]:
        selector = other["spec"]["selector"]
        selector = selector.get("matchLabels", selector)
        assert selector.items() <= labels.items(), f"{other['kind']} selects the pods"
    print(f"kubernetes manifests: {len(docs)} documents consistent with the image (uid {uid})")


if __name__ == "__main__":
    check(sys.argv[1], int(sys.argv[2]))
