"""The scraper and the fetch under it against real HTTP servers on 127.0.0.1 (threads of this process):
concurrency bounded, bodies capped, the token sent, redirects refused, a silent host down with backoff."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from exporter_pages import EXPORTERS, Page, closed_port, serving
from waiting import wait_for

from rocmtui.base.errors import UsageError
from rocmtui.gpu.cluster.fetch import Answer, Connection, FetchError, read_token
from rocmtui.gpu.cluster.scrape import Scraper
from rocmtui.gpu.cluster.targets import TargetError, hostfile_lines, parse_target, parse_targets


def get(url: str, *, timeout_s: float, max_bytes: int, token: str | None = None) -> Answer:
    return Connection(url, token=token).get(timeout_s=timeout_s, max_bytes=max_bytes)


def test_a_round_reads_every_host_and_says_why_one_is_down() -> None:
    dcgm, amd = (
        Page((EXPORTERS / "dcgm-exporter-t4.prom").read_bytes()),
        Page((EXPORTERS / "amd-device-metrics-exporter-mi300x.prom").read_bytes()),
    )
    with serving(dcgm) as a, serving(amd) as b:
        dead = closed_port()
        scraper = Scraper(parse_targets([a, b, dead]))
        try:
            cluster = scraper.round()
        finally:
            scraper.close()
    first, second, third = cluster.hosts
    assert (first.target, first.up, len(first.gpus), first.exporter) == (a, True, 1, "dcgm-exporter")
    assert (second.up, len(second.gpus), second.hostname) == (True, 2, "tw038")
    assert not third.up and third.error is not None and third.error.startswith("connection refused (retrying in 1")
    assert dcgm.requests[0]["Accept"].startswith("text/plain")


def test_a_down_host_is_not_asked_again_until_its_backoff_passes() -> None:
    page = Page(b"", status=503)
    with serving(page) as address:
        scraper = Scraper(parse_targets([address]))
        try:
            one, two = scraper.round(), scraper.round()
        finally:
            scraper.close()
    assert len(page.requests) == 1  # the second round waited out the backoff
    assert one.hosts[0].error == two.hosts[0].error == "HTTP 503 Service Unavailable (retrying in 1 s)"


def test_the_bearer_token_goes_with_each_request() -> None:
    page = Page(b'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 3\n')
    with serving(page) as address:
        scraper = Scraper(parse_targets([address]), token="s3cret")
        try:
            scraper.round()
        finally:
            scraper.close()
    assert page.requests[0]["Authorization"] == "Bearer s3cret"


def test_a_redirect_is_refused_so_the_token_stays_with_its_host() -> None:
    moved = Page(b"", status=302, headers={"Location": "http://127.0.0.2:1/metrics"})
    with serving(moved) as address, pytest.raises(FetchError, match=r"redirected to http://127\.0\.0\.2:1/metrics"):
        get(f"http://{address}/metrics", timeout_s=5, max_bytes=1000, token="t")


def test_a_body_over_the_cap_is_refused() -> None:
    with serving(Page(b"x" * 5000)) as address, pytest.raises(FetchError, match="larger than 4,096 bytes"):
        get(f"http://{address}/metrics", timeout_s=5, max_bytes=4096)


def test_a_host_that_never_answers_times_out() -> None:
    import socket

    with socket.socket() as listener:  # accepts (the kernel's backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        with pytest.raises(FetchError, match=r"no answer within 0\.3 s"):
            get(f"http://127.0.0.1:{listener.getsockname()[1]}/metrics", timeout_s=0.3, max_bytes=100)


@pytest.mark.parametrize(
    ("text", "problem"),
    [("node1", "port is missing"), ("node1:0", "from 1 to 65535"), ("node1:99999", "1 to 65535"),
     ("node 1:9400", "not a host"), ("ftp://node1:21", "http:// or https://"), ("u:p@node1:1", "no user")],
)  # fmt: skip
def test_bad_addresses_are_one_line(text: str, problem: str) -> None:
    with pytest.raises(TargetError, match=problem):
        parse_target(text)


def test_addresses_and_urls() -> None:
    assert parse_target("gpu-7.lab:9400").url == "http://gpu-7.lab:9400/metrics"
    assert parse_target("[::1]:5000").url == "http://[::1]:5000/metrics"
    assert parse_target("https://n1.lab/dcgm/metrics").url == "https://n1.lab/dcgm/metrics"
    assert [t.address for t in parse_targets(["a:1", "a:1", "b:2"])] == ["a:1", "b:2"]


def test_hostfile_comments_and_blank_lines(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("# the lab\nnode1:9400   # dcgm\n\n  node2:5000\n")
    assert hostfile_lines(hosts) == ["node1:9400", "node2:5000"]


def test_a_token_file_must_hold_one_line(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("abc.def\n")
    assert read_token(str(token)) == "abc.def"
    token.write_text("two\nlines\n")
    with pytest.raises(UsageError, match="not one line"):
        read_token(str(token))
    with pytest.raises(UsageError, match="no such file"):
        read_token(str(tmp_path / "none"))


@pytest.fixture
def certificate(tmp_path: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 (openssl), key and certificate in one file."""
    import shutil
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    pem = tmp_path / "server.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(pem), "-out", str(pem)],
        check=True, capture_output=True,
    )  # fmt: skip
    return pem


def tls_context(pem: Path):
    import ssl

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pem)
    return context


def test_https_with_a_certificate_the_system_does_not_trust_is_refused(certificate: Path) -> None:
    page = Page(b'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 3\n')
    with serving(page, tls=tls_context(certificate)) as address, pytest.raises(FetchError, match="not trusted"):
        get(f"https://{address}/metrics", timeout_s=5, max_bytes=1000, token="t")
    assert page.requests == []  # the token never left


def test_https_with_a_trusted_certificate_is_read(certificate: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate))  # as a cluster's own authority is trusted
    page = Page(b'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 3\n')
    with serving(page, tls=tls_context(certificate)) as address:
        scraper = Scraper(parse_targets([f"https://{address}/metrics"]), token="s3cret")
        try:
            (host,) = scraper.round().hosts
        finally:
            scraper.close()
    assert host.up and host.gpus[0].utilization_pct == 3.0
    assert page.requests[0]["Authorization"] == "Bearer s3cret"


PROMETHEUS_ANSWER = EXPORTERS / "prometheus-2.42-query.json"


def test_a_real_prometheus_answer_maps_to_each_instance() -> None:
    from rocmtui.gpu.cluster.prom_query import PrometheusReader

    with serving(Page(PROMETHEUS_ANSWER.read_bytes(), headers={"Content-Type": "application/json"})) as address:
        reader = PrometheusReader(f"http://{address}", token="t")
        cluster = reader.round()
    dcgm, amd, dead = cluster.hosts
    assert (dcgm.target, dcgm.hostname, dcgm.exporter) == ("127.0.0.1:19601", "cp-bm14r7", "dcgm-exporter")
    assert dcgm.gpus[0].utilization_pct == 91.0 and dcgm.gpus[0].memory_used_bytes == 5120 << 20
    assert (amd.hostname, [g.index for g in amd.gpus]) == ("tw038", [0, 2])
    assert amd.gpus[0].power_w == 612.0 and amd.gpus[1].sclk_mhz == 132.0
    assert (dead.target, dead.up) == ("127.0.0.1:19603", False)
    assert cluster.source == "prometheus"


@pytest.mark.parametrize(
    ("body", "reason"),
    [(b'{"status":"error","errorType":"bad_data","error":"parse error"}', "Prometheus: parse error"),
     (b"not json", "Prometheus: not JSON"),
     (b'{"status":"success","data":{"resultType":"matrix","result":[]}}', "success")],
)  # fmt: skip
def test_a_prometheus_that_does_not_answer_well_is_one_down_line(body: bytes, reason: str) -> None:
    from rocmtui.gpu.cluster.prom_query import PrometheusReader

    with serving(Page(body)) as address:
        (host,) = PrometheusReader(f"http://{address}").round().hosts
    assert not host.up and host.error is not None and reason in host.error and "retrying in 1 s" in host.error


def prometheus_answer(util: str = "91") -> bytes:
    return (
        PROMETHEUS_ANSWER.read_bytes()
        .replace(b'"DCGM_FI_DEV_GPU_UTIL"', b'"DCGM_FI_DEV_GPU_UTIL"', 1)
        .replace(b',"value":[1796609618.970,"91"]', f',"value":[1796609618.970,"{util}"]'.encode())
    )


def test_a_prometheus_is_asked_on_one_kept_connection_with_the_token() -> None:
    from rocmtui.gpu.cluster.prom_query import PrometheusReader

    answer = Page(prometheus_answer(), headers={"Content-Type": "application/json"})
    with serving(answer, keep_alive=True) as address:
        reader = PrometheusReader(f"http://{address}", token="s3cret")
        try:
            first = reader.round()
            answer.body = prometheus_answer("17")
            second = reader.round()
        finally:
            reader.close()
    assert (len(answer.requests), answer.connections) == (2, 1)  # one connection, two queries
    assert all(r["Authorization"] == "Bearer s3cret" and r["Accept"] == "application/json" for r in answer.requests)
    assert answer.requests[0]["Accept-Encoding"] == "identity"
    assert (first.hosts[0].gpus[0].utilization_pct, second.hosts[0].gpus[0].utilization_pct) == (91.0, 17.0)


def test_a_prometheus_read_again_reads_what_a_new_reader_reads() -> None:
    """The second answer read with the series' labels and the instances' folds of the first at hand: what a reader
    that never saw the first reads, but for the time a GPU none of whose values changed was read."""
    from rocmtui.gpu.cluster.prom_query import PrometheusReader

    answer = Page(prometheus_answer(), headers={"Content-Type": "application/json"})
    with serving(answer) as address:
        warm = PrometheusReader(f"http://{address}")
        warm.round()
        answer.body = prometheus_answer("17")
        again, fresh = warm.round(), PrometheusReader(f"http://{address}").round()
    assert [(h.target, h.up, h.hostname, h.exporter) for h in again.hosts] == [
        (h.target, h.up, h.hostname, h.exporter) for h in fresh.hosts
    ]
    timeless = [[replace(g, timestamp=0.0) for g in h.gpus] for h in again.hosts]
    assert timeless == [[replace(g, timestamp=0.0) for g in h.gpus] for h in fresh.hosts]
    assert again.hosts[0].gpus[0].utilization_pct == 17.0


def test_a_prometheus_answer_that_redirects_or_is_over_the_cap_is_one_down_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rocmtui.gpu.cluster import prom_query

    moved = Page(b"", status=302, headers={"Location": "http://127.0.0.2:1/"})
    with serving(moved) as address:
        (host,) = prom_query.PrometheusReader(f"http://{address}", token="t").round().hosts
    assert not host.up and host.error is not None and "redirected to http://127.0.0.2:1/ (not followed)" in host.error
    monkeypatch.setattr(prom_query, "MAX_ANSWER_BYTES", 1000)
    with serving(Page(prometheus_answer())) as address:
        (host,) = prom_query.PrometheusReader(f"http://{address}").round().hosts
    assert not host.up and host.error is not None and "larger than 1,000 bytes" in host.error


def test_a_prometheus_whose_series_labels_are_not_strings_is_one_down_line() -> None:
    from rocmtui.gpu.cluster.prom_query import PrometheusReader

    body = b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{"gpu":0},"value":[1,"3"]}]}}'
    with serving(Page(body)) as address:
        (host,) = PrometheusReader(f"http://{address}").round().hosts
    assert not host.up and host.error is not None and host.error.startswith("Prometheus: Prometheus answer: a series")


def test_a_prometheus_reader_closed_starts_no_query() -> None:
    from rocmtui.gpu.cluster.prom_query import PrometheusReader

    answer = Page(prometheus_answer())
    with serving(answer) as address:
        reader = PrometheusReader(f"http://{address}")
        reader.close()
        (host,) = reader.round().hosts
    assert (host.up, host.error, answer.requests) == (False, "not read: stopping", [])


def test_a_page_unchanged_since_the_last_round_is_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from rocmtui.gpu.cluster import exposition, scrape

    parsed: list[int] = []

    def counted(*args, **kwargs):
        parsed.append(1)
        return exposition.read_page(*args, **kwargs)

    monkeypatch.setattr(scrape, "read_page", counted)
    page = Page((EXPORTERS / "dcgm-exporter-t4.prom").read_bytes())
    with serving(page) as address:
        scraper = Scraper(parse_targets([address]))
        try:
            first, second = scraper.round(), scraper.round()
            page.body = page.body.replace(b"} 91\n", b"} 12\n")  # DCGM_FI_DEV_GPU_UTIL: a new sample
            third = scraper.round()
        finally:
            scraper.close()
    assert len(parsed) == 2
    assert second.hosts[0].gpus == first.hosts[0].gpus and second.hosts[0].timestamp > first.hosts[0].timestamp
    assert third.hosts[0].gpus[0].utilization_pct == 12.0


def test_closing_cancels_the_fetches_not_yet_started() -> None:
    import socket
    import threading

    with socket.socket() as listener:  # takes the connection, never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        held: list[socket.socket] = []
        threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
        silent = f"127.0.0.1:{listener.getsockname()[1]}"
        scraper = Scraper(parse_targets([silent, closed_port()]), timeout_s=1.0, max_parallel=1)
        rounds = []
        reading = threading.Thread(target=lambda: rounds.append(scraper.round()))
        reading.start()
        wait_for(lambda: held, 10, "the first fetch to connect")
        scraper.close()  # the second fetch has not started: cancelled
        reading.join()
        for conn in held:
            conn.close()
    first, second = rounds[0].hosts
    assert first.error is not None and first.error.startswith("no answer within 1 s")
    assert second.error == "not read: stopping"


def test_a_host_is_asked_again_on_its_kept_connection_and_on_a_new_one_once_the_server_closed_it() -> None:
    page = Page(b'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 3\n')
    with serving(page, keep_alive=True, idle_s=2.0) as address:
        scraper = Scraper(parse_targets([address]))
        try:
            first, second = scraper.round(), scraper.round()
            assert (len(page.requests), page.connections) == (2, 1)  # one connection, two requests
            wait_for(lambda: page.closed == 1, what="the server to close the idle connection")
            third = scraper.round()
        finally:
            scraper.close()
    assert all(r.hosts[0].up and r.hosts[0].gpus[0].utilization_pct == 3.0 for r in (first, second, third))
    assert (len(page.requests), page.connections) == (3, 2)


def test_a_kept_connection_refuses_a_redirect_and_an_error_as_a_new_one_does() -> None:
    moved = Page(b"", status=302, headers={"Location": "/elsewhere"})
    with serving(moved, keep_alive=True) as address:
        connection = Connection(f"http://{address}/metrics", token="t")
        with pytest.raises(FetchError, match=rf"HTTP 302: redirected to http://{address}/elsewhere \(not followed\)"):
            connection.get(timeout_s=5, max_bytes=100)
    big = Page(b"x" * 5000)
    with serving(big, keep_alive=True) as address, pytest.raises(FetchError, match="larger than 4,096 bytes"):
        Connection(f"http://{address}/metrics").get(timeout_s=5, max_bytes=4096)
    down = Page(b"", status=503)
    with serving(down, keep_alive=True) as address, pytest.raises(FetchError, match="HTTP 503 Service Unavailable"):
        Connection(f"http://{address}/metrics").get(timeout_s=5, max_bytes=4096)
