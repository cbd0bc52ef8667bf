"""A Kubernetes API on loopback for policyc serve's list+watch tests.

It answers as the real API server does on the wire: HTTPS, a bearer token
(401 without it), lists as typed lists (`NodeList`, items without `kind`,
`metadata.resourceVersion`, pages with `metadata.continue`), watches as a
chunked stream of one JSON event per line (objects with `kind`, BOOKMARK
events with only a resourceVersion, `ERROR` with a `410` Status when the
version asked for is too old), and pods/binding. A test changes the objects
(each change is an event to the watchers of its kind), breaks the streams,
or expires the versions, and reads what the client asked for.

It authorizes as the API server's RBAC does for the caller it stands for:
every request is checked against a ClusterRole (by default the one of
examples/extender/rbac.yaml, what policyc serve is deployed with); one the
role does not grant gets 403 Forbidden with the API server's message, before
anything else (a kind not served included).
"""

import json
import os
import re
import ssl
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PLURALS = {"Node": "nodes", "Pod": "pods", "Namespace": "namespaces", "Service": "services",
           "ReplicationController": "replicationcontrollers", "ReplicaSet": "replicasets",
           "StatefulSet": "statefulsets", "PersistentVolumeClaim": "persistentvolumeclaims",
           "PersistentVolume": "persistentvolumes", "StorageClass": "storageclasses",
           "PriorityClass": "priorityclasses", "PodDisruptionBudget": "poddisruptionbudgets"}  # csinodes: not served (404), as on an API without them
KINDS = {v: k for k, v in PLURALS.items()}
RBAC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../examples/extender/rbac.yaml")
USER = "system:serviceaccount:kube-system:policyc"


def cluster_role_rules(path=RBAC, name="policyc-extender"):
    """The set of (apiGroup, resource, verb) the ClusterRole `name` of the YAML file `path` grants."""
    import yaml
    granted = set()
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if not doc or doc.get("kind") != "ClusterRole" or doc["metadata"]["name"] != name:
                continue
            for rule in doc.get("rules", []):
                for group in rule.get("apiGroups", []):
                    for resource in rule.get("resources", []):
                        for verb in rule.get("verbs", []):
                            granted.add((group, resource, verb))
    return granted


def group_of(path):
    """The API group of a request path: "" for /api/v1/..., G for /apis/G/V/..."""
    parts = path.strip("/").split("/")
    return "" if parts[0] == "api" else parts[1] if len(parts) > 1 else ""


class FakeApi:
    def __init__(self, objects, token, certfile, keyfile, page=4, rules=None):
        self.token = token
        self.rules = cluster_role_rules() if rules is None else rules  # what RBAC grants the caller
        self.page = page  # items per list page, whatever limit asks (the API may return fewer)
        self.lock = threading.Condition()
        self.rv = 100
        self.store = {}  # plural -> {key: object}
        self.events = {}  # plural -> [(rv, event)], for watchers
        self.requests = []  # (method, path, query dict)
        self.bindings = []
        self.refuse_binding = set()  # pod names whose binding answers 409
        self.oldest = 0  # watches from a version below this get 410
        self.generation = 0  # bumped to break every open stream
        self.delivered = {}  # plural -> the last version a watch stream wrote
        for o in objects:
            self._put(o)
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                api._get(self)

            def do_POST(self):
                api._post(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certfile, keyfile)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    # --- what a test does ------------------------------------------------

    def _put(self, o):
        self.rv += 1
        o = json.loads(json.dumps(o))
        o.setdefault("metadata", {})["resourceVersion"] = str(self.rv)
        plural = PLURALS[o["kind"]]
        key = (o["metadata"].get("namespace", ""), o["metadata"]["name"])
        added = key not in self.store.setdefault(plural, {})
        self.store[plural][key] = o
        return plural, o, added

    def change(self, o, deleted=False, quiet=False):
        """Adds, modifies or deletes `o`; an event to its watchers unless quiet (a change they miss)."""
        with self.lock:
            if deleted:
                self.rv += 1
                plural = PLURALS[o["kind"]]
                key = (o["metadata"].get("namespace", ""), o["metadata"]["name"])
                gone = self.store[plural].pop(key)
                gone["metadata"]["resourceVersion"] = str(self.rv)
                event = {"type": "DELETED", "object": gone}
            else:
                plural, stored, added = self._put(o)
                event = {"type": "ADDED" if added else "MODIFIED", "object": stored}
            if not quiet:
                self.events.setdefault(plural, []).append((self.rv, event))
            self.lock.notify_all()

    def bookmark(self, plural):
        with self.lock:
            self.rv += 1
            kind = KINDS[plural]
            self.events.setdefault(plural, []).append(
                (self.rv, {"type": "BOOKMARK", "object": {"kind": kind, "apiVersion": "v1",
                                                          "metadata": {"resourceVersion": str(self.rv)}}}))
            self.lock.notify_all()
            return str(self.rv)

    def delivered_version(self, plural):
        """The last version a watch of `plural` has written to its stream."""
        with self.lock:
            return self.delivered.get(plural, 0)

    def break_streams(self):
        with self.lock:
            self.generation += 1
            self.lock.notify_all()

    def expire(self):
        """Every version up to now is too old: the next watch gets 410 Gone."""
        with self.lock:
            self.oldest = self.rv + 1
            self.generation += 1
            self.lock.notify_all()

    def objects(self):
        with self.lock:
            return [json.loads(json.dumps(o)) for kind in self.store.values() for o in kind.values()]

    def watches(self, plural):
        return [q for m, p, q in self.requests if p.endswith("/" + plural) and q.get("watch") == "1"]

    def lists(self, plural):
        return [q for m, p, q in self.requests if p.endswith("/" + plural) and q.get("watch") != "1"]

    # --- the wire ----------------------------------------------------------

    def _auth(self, h):
        if h.headers.get("Authorization") != f"Bearer {self.token}":
            self._json(h, 401, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "Unauthorized",
                                "reason": "Unauthorized", "code": 401})
            return False
        return True

    def _authorized(self, h, group, resource, verb):
        if (group, resource, verb) in self.rules or ("*", "*", "*") in self.rules:
            return True
        where = f'in API group "{group}" at the cluster scope'
        self._json(h, 403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
                            "message": f'{resource} is forbidden: User "{USER}" cannot {verb} resource '
                                       f'"{resource}" {where}'})
        return False

    def _json(self, h, code, body):
        data = json.dumps(body).encode()
        h.send_response(code)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _get(self, h):
        url = urllib.parse.urlsplit(h.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        with self.lock:
            self.requests.append(("GET", url.path, query))
        if not self._auth(h):
            return
        plural = url.path.rsplit("/", 1)[-1]
        if not self._authorized(h, group_of(url.path), plural, "watch" if query.get("watch") == "1" else "list"):
            return
        if plural not in KINDS:
            self._json(h, 404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "the server could "
                                "not find the requested resource", "reason": "NotFound", "code": 404})
            return
        if query.get("watch") == "1":
            self._watch(h, plural, int(query.get("resourceVersion") or 0))
            return
        with self.lock:
            items = sorted(self.store.get(plural, {}).values(), key=lambda o: o["metadata"]["name"])
            start = int(query.get("continue") or 0)
            page = [{k: v for k, v in o.items() if k not in ("kind", "apiVersion")} for o in items[start:start + self.page]]
            meta = {"resourceVersion": str(self.rv)}
            if start + self.page < len(items):
                meta["continue"] = str(start + self.page)
            self._json(h, 200, {"kind": KINDS[plural] + "List", "apiVersion": "v1", "metadata": meta, "items": page})

    def _watch(self, h, plural, since):
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

        def chunk(obj):
            data = (json.dumps(obj) + "\n").encode()
            h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            h.wfile.flush()

        with self.lock:
            generation = self.generation
            if since < self.oldest:
                chunk({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                                   "message": f"too old resource version: {since} ({self.oldest})",
                                                   "reason": "Expired", "code": 410}})
                h.wfile.write(b"0\r\n\r\n")
                return
            sent = since
            while True:
                for rv, event in self.events.get(plural, []):
                    if rv > sent:
                        try:
                            chunk(event)
                        except OSError:
                            return
                        sent = rv
                        self.delivered[plural] = max(self.delivered.get(plural, 0), rv)
                if self.generation != generation:  # broken mid-stream: no final chunk, the connection drops
                    h.close_connection = True
                    try:
                        h.connection.shutdown(2)
                    except OSError:
                        pass
                    return
                self.lock.wait(0.2)

    def _post(self, h):
        url = urllib.parse.urlsplit(h.path)
        body = json.loads(h.rfile.read(int(h.headers.get("Content-Length") or 0)) or b"{}")
        with self.lock:
            self.requests.append(("POST", url.path, {}))
        if not self._auth(h):
            return
        m = re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding", url.path)
        if m and not self._authorized(h, "", "pods/binding", "create"):
            return
        if not m:
            self._json(h, 404, {"kind": "Status", "code": 404, "message": "not found"})
            return
        ns, name = m.groups()
        with self.lock:
            self.bindings.append(body)
            if name in self.refuse_binding:
                self._json(h, 409, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 409,
                                    "message": f"pod {name} is already assigned to node \"elsewhere\"", "reason": "Conflict"})
                return
        pod = self.store.get("pods", {}).get((ns, name))
        if pod is None:
            self._json(h, 404, {"kind": "Status", "code": 404, "message": f"pods \"{name}\" not found"})
            return
        pod = json.loads(json.dumps(pod))
        pod["spec"]["nodeName"] = body["target"]["name"]
        self.change(pod)
        self._json(h, 201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201})

    def close(self):
        self.httpd.shutdown()
