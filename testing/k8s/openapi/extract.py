#!/usr/bin/env python3
"""Extracts from Kubernetes' OpenAPI v2 document (swagger.json) the
definitions the test API server validates against (README.md beside this
file says where the document comes from), reproducibly:

  extract.py swagger.json > definitions.json

It keeps the definitions of the root kinds below and every definition they
reference, drops the "description" texts (most of the size), and nothing
else: the schemas are Kubernetes' own, field for field."""
import json
import sys

ROOTS = [
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.Binding",
    "io.k8s.api.core.v1.Service",
    "io.k8s.api.core.v1.Event",
    "io.k8s.api.core.v1.Node",
    "io.k8s.api.core.v1.Namespace",
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.coordination.v1.Lease",
    "io.k8s.api.events.v1.Event",
    "io.k8s.api.batch.v1.Job",
]


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def refs(node, out):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/definitions/"):
            out.append(ref[len("#/definitions/"):])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    defs = doc["definitions"]
    keep, todo = {}, list(ROOTS)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep[name] = strip(defs[name])
        refs(keep[name], todo)
    out = {"swagger": doc["swagger"], "info": doc["info"], "definitions": keep}
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
