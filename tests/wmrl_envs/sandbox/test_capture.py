"""Logs keep their head and tail, mark the cut, and count every byte."""

from wmrl_envs.sandbox.capture import BoundedLog


def test_short_output_is_kept_whole():
    log = BoundedLog(100)
    log.write(b"hello\n")
    assert log.text() == "hello\n" and log.total == 6


def test_long_output_keeps_head_and_tail_and_marks_the_cut():
    log = BoundedLog(20)
    for i in range(1000):
        log.write(f"{i:04d}\n".encode())
    text = log.text()
    assert text.startswith("0000\n0001")
    assert text.endswith("0998\n0999\n")
    assert f"{5000 - 20} bytes cut" in text
    assert log.total == 5000


def test_invalid_utf8_is_replaced_not_raised():
    log = BoundedLog(10)
    log.write(b"\xff\xfeok")
    assert "ok" in log.text()
