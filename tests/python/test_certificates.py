"""Certificates from Python (docs/CERTIFICATES.md): denote.verify(..., certificate=True) returns an unsat
answer's proof, denote.check_certificate re-validates it (as text or as a file, the CLI's format), and
mutations of it are rejected."""
import json
import os
import subprocess

import pytest

import denote


@pytest.fixture(scope="module")
def acas_unsat(acas_path, data_dir):
    m = denote.load(acas_path)
    prop = os.path.join(data_dir, "acasxu", "prop_4.vnnlib")
    r = denote.verify(m, prop, timeout=60, certificate=True)
    return m, prop, r


def test_verify_gives_a_certificate_that_checks(acas_unsat):
    m, prop, r = acas_unsat
    assert r["result"] == "unsat"
    assert r["certificate_error"] == ""
    doc = json.loads(r["certificate"])
    assert doc["format"] == "denote.certificate" and doc["version"] == 1
    rep = denote.check_certificate(m, prop, r["certificate"])
    assert rep["valid"], rep["failure"]
    assert rep["failure"] == ""
    assert rep["jobs"] == 1 and rep["leaves"] == rep["splits"] + 1 and rep["leaves"] > 2


def test_mutated_certificates_are_rejected(acas_unsat):
    m, prop, r = acas_unsat
    doc = json.loads(r["certificate"])
    tree = doc["jobs"][0]["tree"]
    first_leaf = next(i for i, n in enumerate(tree) if "leaf" in n)
    no_leaf = json.loads(r["certificate"])
    del no_leaf["jobs"][0]["tree"][first_leaf]
    rep = denote.check_certificate(m, prop, json.dumps(no_leaf))
    assert not rep["valid"]
    negative = json.loads(r["certificate"])
    lam = negative["jobs"][0]["tree"][first_leaf]["leaf"]["lambda"]
    negative["jobs"][0]["tree"][first_leaf]["leaf"]["lambda"] = [-1.0 for _ in lam]
    rep = denote.check_certificate(m, prop, json.dumps(negative))
    assert not rep["valid"] and "lambda" in rep["failure"]


def test_certificate_file_and_cli_agree(acas_unsat, tmp_path, cli, acas_path):
    m, prop, r = acas_unsat
    path = tmp_path / "p4.cert.json"
    path.write_text(r["certificate"])
    assert denote.check_certificate(m, prop, str(path))["valid"]
    out = subprocess.run([cli, "check-certificate", acas_path, prop, str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("valid: 1 job,")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "denote.certificate", "version": 1, "jobs": [{"case": 0, "conjunction": 0, "tree": []}]}')
    out = subprocess.run([cli, "check-certificate", acas_path, prop, str(bad)], capture_output=True, text=True)
    assert out.returncode == 1 and out.stdout.startswith("invalid: jobs[0]")


def test_malformed_certificates_raise_naming_the_path(acas_unsat):
    m, prop, _ = acas_unsat
    with pytest.raises(denote.Error) as e:
        denote.check_certificate(m, prop, '{"format": "denote.certificate", "version": 1, "jobs": [{"case": 0}]}')
    assert "jobs[0]" in str(e.value)


def test_no_certificate_for_a_sat_answer(data_dir):
    m = denote.load(os.path.join(data_dir, "acasxu", "ACASXU_run2a_2_1_batch_2000.onnx"))
    r = denote.verify(m, os.path.join(data_dir, "acasxu", "prop_2.vnnlib"), timeout=60, certificate=True)
    assert r["result"] == "sat"
    assert r["certificate"] is None
    assert "certificate" not in denote.verify(m, os.path.join(data_dir, "acasxu", "prop_2.vnnlib"), timeout=60)


def test_the_f32_evaluation_on_request(acas_unsat):
    m, prop, r = acas_unsat
    rep = denote.check_certificate(m, prop, r["certificate"], arith="f32")
    assert rep["valid"], rep["failure"]
    with pytest.raises(denote.InvalidInputError):
        denote.check_certificate(m, prop, r["certificate"], arith="f16")
