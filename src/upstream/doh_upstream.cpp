#include "doh_upstream.hpp"

#include <string>

namespace moat::upstream {

bool DohUpstream::on_connected(TlsStream& stream, std::string& why) {
    const unsigned char* name = nullptr;
    unsigned int length = 0;
    SSL_get0_alpn_selected(stream.native_handle(), &name, &length);
    if (std::string_view(reinterpret_cast<const char*>(name), name == nullptr ? 0 : length) !=
        "h2") {
        why = "the server does not offer HTTP/2 (ALPN h2)";
        return false;
    }
    const ServerAddress& s = server();
    session_.start(s.name + (s.port == 443 ? "" : ":" + std::to_string(s.port)), s.path);
    flush();
    return true;
}

bool DohUpstream::send(Exchange& x) {
    if (!session_.send(x)) {
        return false;
    }
    flush();
    return true;
}

void DohUpstream::on_bytes(std::span<const std::uint8_t> bytes) {
    const auto received = session_.receive(
        bytes, [this](Exchange& x, std::string_view error, std::span<const std::uint8_t> reply) {
            heard_from();
            x.done(std::string(error), reply);
        });
    if (!session_.started()) {
        return;  // a completion dropped the connection
    }
    flush();
    if (!received) {
        drop("HTTP/2: " + received.error());
        return;
    }
    if (session_.spent()) {
        // The server ends the session (GOAWAY, e.g. it restarts): what waits goes on a new one.
        drop("the server closed the HTTP/2 session");
        return;
    }
    send_waiting();  // answers free room for more streams
}

void DohUpstream::flush() {
    while (session_.wants_write()) {
        const auto out = session_.pending_output();
        if (out.empty()) {
            break;
        }
        write(out);
        session_.consume_output(out.size());
    }
}

std::vector<EncryptedUpstream::Exchange> DohUpstream::take_in_flight() {
    return session_.take_in_flight();
}

}  // namespace moat::upstream
