"""The client against docs/openapi.json: every route it calls exists with its method and
operationId and takes the parameters the client sends; every response member it reads is a
member of the schema it reads it from; and the client's code reads no member and calls no
route that _api.py does not declare (so the two checks above see everything)."""

import json
import os
import re
import unittest

import support  # noqa: F401  (puts the package beside the tests first on sys.path)

from tuneplane_client import _api

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "tuneplane_client")
OPENAPI = os.path.join(HERE, "..", "..", "..", "docs", "openapi.json")


@unittest.skipUnless(os.path.exists(OPENAPI), "docs/openapi.json is not beside the client")
class OpenApiTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(OPENAPI, encoding="utf-8") as f:
            cls.doc = json.load(f)

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            target = self.doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    def operation(self, operation_id):
        for path, methods in self.doc["paths"].items():
            for method, op in methods.items():
                if isinstance(op, dict) and op.get("operationId") == operation_id:
                    return method.upper(), path, op
        self.fail(f"no operation {operation_id} in openapi.json")

    def test_routes(self):
        for operation_id, (method, path, params) in _api.ROUTES.items():
            with self.subTest(operation_id):
                doc_method, doc_path, op = self.operation(operation_id)
                self.assertEqual((method, path), (doc_method, doc_path))
                names = {self.resolve(p)["name"] for p in op.get("parameters", [])}
                self.assertLessEqual(set(params), names)

    def test_members_read(self):
        schemas = self.doc["components"]["schemas"]
        for schema, members in _api.FIELDS_READ.items():
            with self.subTest(schema):
                self.assertIn(schema, schemas)
                properties = self.resolve(schemas[schema]).get("properties", {})
                for member in members:
                    self.assertIn(member, properties, f"{schema}.{member}")

    def test_submit_answers(self):
        _, _, op = self.operation("submitJob")
        for status in ("200", "201", "409", "422", "503"):
            self.assertIn(status, op["responses"])
        self.assertIn("Idempotent-Replayed", json.dumps(op))

    def test_workdir_upload(self):
        _, _, op = self.operation("uploadWorkdir")
        self.assertIn("application/x-tar", op["requestBody"]["content"])
        for status in ("200", "201", "413", "422"):
            self.assertIn(status, op["responses"])

    def code(self):
        """The client's code that reads answers (spec.py builds specs, config.py reads the
        config file: neither reads the API)."""
        text = ""
        for name in sorted(os.listdir(PACKAGE)):
            if name.endswith(".py") and name not in ("_api.py", "spec.py", "config.py"):
                with open(os.path.join(PACKAGE, name), encoding="utf-8") as f:
                    text += f.read()
        return text

    def test_the_client_reads_only_declared_members(self):
        declared = {m for members in _api.FIELDS_READ.values() for m in members}
        code = self.code()
        read = set(re.findall(r"\[\"([a-z_]+)\"\]", code)) | set(
            re.findall(r"\.get\(\"([a-z_]+)\"", code)) | set(
            re.findall(r"\.get\('([a-z_]+)'", code))
        self.assertTrue(read)
        self.assertLessEqual(read, declared)

    def test_the_client_calls_only_declared_routes(self):
        called = set(re.findall(r"_(?:call|open)\(\s*\"(\w+)\"", self.code()))
        self.assertTrue(called)
        self.assertLessEqual(called, set(_api.ROUTES))
        self.assertEqual(called, set(_api.ROUTES), "a declared route the client never calls")


if __name__ == "__main__":
    unittest.main()
