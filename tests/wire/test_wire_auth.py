"""Configured users: the right password gets in; anything else is error 1045 and a closed
connection."""

from __future__ import annotations

import shutil
import subprocess

import mysql.connector
import pymysql
import pytest
from rawmysql import RawClient, error_code

pytestmark = pytest.mark.wire

PASSWORD = "s3cret'\\pw"


def test_right_password(auth_server):
    conn = auth_server.pymysql(user="alice", password=PASSWORD)
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
    conn.close()
    conn = auth_server.connector(user="alice", password=PASSWORD)
    conn.close()
    conn = auth_server.pymysql(user="bob", password="")  # configured with an empty password
    conn.close()


@pytest.mark.parametrize(
    "user,password", [("alice", "wrong"), ("alice", ""), ("bob", "x"), ("mallory", PASSWORD)]
)
def test_wrong_credentials(auth_server, user, password):
    with pytest.raises(pymysql.err.OperationalError) as info:
        auth_server.pymysql(user=user, password=password)
    assert info.value.args[0] == 1045
    with pytest.raises(mysql.connector.Error) as info:
        auth_server.connector(user=user, password=password)
    assert info.value.errno == 1045 and info.value.sqlstate == "28000"


def test_failed_login_closes_the_connection(auth_server):
    c = RawClient(auth_server.host, auth_server.port)
    reply = c.handshake(user="alice")  # empty password
    assert error_code(reply) == 1045
    # whatever the client sends next, it gets no answer: the server hung up
    try:
        c.command(b"\x03SELECT 1")
        answered = True
    except ConnectionError:
        answered = False
    assert not answered
    c.close()


def test_mariadb_client_auth(auth_server):
    exe = shutil.which("mariadb") or shutil.which("mysql")
    assert exe, "the mariadb command-line client is required (apt-get install mariadb-client)"
    base = [exe, "-h", auth_server.host, "-P", str(auth_server.port), "-u", "alice"]
    ok = subprocess.run(base + [f"-p{PASSWORD}", "-e", "SELECT 2"], capture_output=True, text=True)
    assert ok.returncode == 0 and ok.stdout.split() == ["2", "2"], ok.stderr
    bad = subprocess.run(base + ["-pnope", "-e", "SELECT 2"], capture_output=True, text=True)
    assert bad.returncode != 0 and "ERROR 1045 (28000)" in bad.stderr


def test_no_users_means_anyone(server):
    conn = server.pymysql(user="anyone", password="anything")
    conn.close()
