"""A real SMTP server for the mail tests (aiosmtpd, PyPI): it keeps each
message it accepts as a JSON file in a folder, with the envelope, whether
the session was under TLS and who authenticated.

    smtp_sink.py PORT DIR MODE [CERT KEY] [USER:PASSWORD]

MODE is `starttls` (STARTTLS offered and required before MAIL), `tls` (TLS
from the first byte) or `plain` (no STARTTLS offered). Prints `ready` once
it listens. A recipient whose address starts with `refused` is refused
with `550 5.1.1`, as a server refuses an unknown mailbox.
"""

import json
import os
import ssl
import sys
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


class Keep:
    def __init__(self, folder):
        self.folder = folder
        self.count = 0

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address.startswith("refused"):
            return "550 5.1.1 <%s>: Recipient address rejected: no such mailbox" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        record = {
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            # STARTTLS sets session.ssl; TLS from the first byte shows on
            # the transport.
            "tls": session.ssl is not None
            or server.transport.get_extra_info("ssl_object") is not None,
            "login": session.auth_data if session.authenticated else None,
            "data": envelope.content.decode("utf-8", "replace"),
        }
        path = os.path.join(self.folder, "%04d.json" % self.count)
        with open(path + ".tmp", "w") as f:
            json.dump(record, f)
        os.rename(path + ".tmp", path)
        return "250 OK kept"


def main():
    port, folder, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    rest = sys.argv[4:]
    context = None
    if mode in ("starttls", "tls"):
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(rest[0], rest[1])
        rest = rest[2:]
    kwargs = {}
    if rest:
        user, password = rest[0].split(":", 1)

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = auth_data.login.decode() == user and auth_data.password.decode() == password
            return AuthResult(success=ok, auth_data=user if ok else None)

        kwargs["authenticator"] = authenticator
        kwargs["auth_require_tls"] = True
    if mode == "starttls":
        kwargs["tls_context"] = context
        kwargs["require_starttls"] = True
    elif mode == "tls":
        # The Controller's own option: TLS on the listening socket.
        kwargs["ssl_context"] = context
    controller = Controller(Keep(folder), hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    print("ready", flush=True)
    while True:
        time.sleep(3600)


main()
