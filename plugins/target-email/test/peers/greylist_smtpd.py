#!/usr/bin/python3
"""A second, independent SMTP server for the email target's tests: Debian's aiosmtpd (python3-aiosmtpd)
on a free loopback port, greylisting like many real mail servers do.

The first FAIL_TIMES recipients (argv[1], default 1) are answered "451 4.7.1" (try again later);
after that every recipient is accepted and each message is kept. Plain SMTP, no login.

Writes one JSON object a line to stdout:
  {"event": "listening", "port": N}                          once, when it accepts connections
  {"event": "greylisted", "rcpt": "...", "mail_from": "..."}  for each 451
  {"event": "message", "mail_from": "...", "rcpt_tos": [...], "data": "..."}  for each message
Stops on SIGTERM or SIGINT.
"""
import asyncio
import json
import signal
import sys

from aiosmtpd.smtp import SMTP


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Greylist:
    def __init__(self, fail_times):
        self.left = fail_times

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.left > 0:
            self.left -= 1
            emit({"event": "greylisted", "rcpt": address, "mail_from": envelope.mail_from})
            return "451 4.7.1 Greylisted, please try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        emit({
            "event": "message",
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "data": envelope.original_content.decode("utf-8", "replace"),
        })
        return "250 2.0.0 Message accepted for delivery"


async def main():
    fail_times = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    handler = Greylist(fail_times)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, hostname="greylist.test", ident="aiosmtpd greylist peer"),
        host="127.0.0.1",
        port=0,
    )
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    emit({"event": "listening", "port": server.sockets[0].getsockname()[1]})
    await stop.wait()
    server.close()
    await server.wait_closed()


if __name__ == "__main__":
    asyncio.run(main())
