"""The wire contract of crates/protocol, checked against the TCLIService definitions real
clients ship (PyHive's and impyla's generated Thrift modules, read at test time): every struct
and union a client knows exists here with the same field ids, names and wire types, required
fields agree, and enum constants have the same values. `apiary wire-spec` prints ours."""

import importlib
import inspect
import re
import subprocess

import pytest

from conftest import BIN

CLIENT_MODULES = {
    "pyhive": "TCLIService.ttypes",
    "impyla": "impala._thrift_gen.TCLIService.ttypes",
}


def norm(name):
    return name.replace("r#", "").replace("_", "").lower()


def ours():
    out = subprocess.run([BIN, "wire-spec"], capture_output=True, text=True, check=True).stdout
    structs, enums = {}, {}
    for line in out.splitlines():
        parts = line.split()
        if parts[0] == "field":
            _, s, fid, name, ttype, req = parts
            structs.setdefault(s, {})[int(fid)] = (norm(name), int(ttype), req == "required")
        elif parts[0] == "value":
            _, e, name, value = parts
            enums.setdefault(e, {})[name] = int(value)
    return structs, enums


def theirs(module):
    mod = importlib.import_module(module)
    structs, enums = {}, {}
    for name, cls in inspect.getmembers(mod, inspect.isclass):
        if cls.__module__ != mod.__name__:
            continue
        if hasattr(cls, "_VALUES_TO_NAMES"):
            enums[name] = {n: v for v, n in cls._VALUES_TO_NAMES.items()}
        elif getattr(cls, "thrift_spec", None) is not None:
            try:
                required = set(re.findall(r"Required field (\w+) is unset", inspect.getsource(cls.validate)))
            except (OSError, TypeError, AttributeError):
                required = set()
            fields = {}
            for f in cls.thrift_spec:
                if f is None:
                    continue
                fid, ttype, fname = f[0], f[1], f[2]
                fields[fid] = (norm(fname), ttype, fname in required)
            structs[name] = fields
    return structs, enums


@pytest.mark.parametrize("client", sorted(CLIENT_MODULES))
def test_wire_contract_matches_the_clients_definitions(client):
    our_structs, our_enums = ours()
    their_structs, their_enums = theirs(CLIENT_MODULES[client])
    assert their_structs, f"no TCLIService structs found in {CLIENT_MODULES[client]}"
    problems = []
    compared = 0
    for s, fields in sorted(their_structs.items()):
        if s not in our_structs:
            problems.append(f"{s}: {client} has it, Apiary does not")
            continue
        for fid, (name, ttype, required) in sorted(fields.items()):
            mine = our_structs[s].get(fid)
            if mine is None:
                problems.append(f"{s}.{fid} ({name}): missing in Apiary")
                continue
            if mine[0] != name:
                problems.append(f"{s}.{fid}: named {mine[0]} in Apiary, {name} in {client}")
            if mine[1] != ttype:
                problems.append(f"{s}.{fid} ({name}): wire type {mine[1]} in Apiary, {ttype} in {client}")
            if mine[2] != required:
                problems.append(f"{s}.{fid} ({name}): required={mine[2]} in Apiary, {required} in {client}")
            compared += 1
        for fid in sorted(set(our_structs[s]) - set(fields)):
            # A newer protocol version's field an older client does not know: allowed only
            # if optional, since the client never sends it.
            if our_structs[s][fid][2]:
                problems.append(f"{s}.{fid} ({our_structs[s][fid][0]}): required in Apiary, unknown to {client}")
    for e, values in sorted(their_enums.items()):
        if e not in our_enums:
            continue  # enums only the client uses (for example TSaslMechanism) need no twin
        for name, value in sorted(values.items()):
            # TProtocolVersion's constants are V1..V11 here, HIVE_CLI_SERVICE_PROTOCOL_Vn there.
            name = name.removeprefix("HIVE_CLI_SERVICE_PROTOCOL_")
            if name in our_enums[e] and our_enums[e][name] != value:
                problems.append(f"{e}.{name}: {our_enums[e][name]} in Apiary, {value} in {client}")
            if name not in our_enums[e] and value in our_enums[e].values():
                problems.append(f"{e}: value {value} is {name} in {client}, another name in Apiary")
    assert not problems, "\n".join(problems)
    # Every request and reply of the service, and the types inside them, were compared.
    assert len(their_structs) >= 60 and compared >= 150, (len(their_structs), compared)
