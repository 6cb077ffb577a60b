#include "dot_upstream.hpp"

#include <string>

namespace moat::upstream {

bool DotUpstream::on_connected(TlsStream& /*stream*/, std::string& /*why*/) {
    session_.restart();
    return true;
}

bool DotUpstream::send(Exchange& x) {
    if (!DotSession::can_frame(x.query)) {
        std::string why =
            "a query of " + std::to_string(x.query.size()) + " octets cannot be sent over TCP";
        fail_one(std::move(x), std::move(why));
        return true;
    }
    if (session_.full()) {
        return false;  // it waits for an answer to free an ID
    }
    write(session_.frame(std::move(x)));
    return true;
}

void DotUpstream::on_bytes(std::span<const std::uint8_t> bytes) {
    session_.receive(bytes, [this](Exchange& x, std::span<const std::uint8_t> reply) {
        heard_from();
        x.done({}, reply);
    });
    send_waiting();  // answers free IDs for what waited on a full session
}

std::vector<EncryptedUpstream::Exchange> DotUpstream::take_in_flight() {
    return session_.take_in_flight();
}

}  // namespace moat::upstream
