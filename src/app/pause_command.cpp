#include "pause_command.hpp"

#include <iostream>

#include "control_socket.hpp"
#include "moat/config/values.hpp"

namespace moat::app {

int run_pause(const Launch& launch, const std::string& socket, const std::string& duration,
              const std::string& group) {
    std::string path = socket;
    if (path.empty()) {
        const auto c = load_config(launch);
        if (!c) {
            std::cerr << c.error() << "\n";
            return 78;
        }
        path = c->server.control_socket;
        if (path.empty()) {
            std::cerr << "the config turns the control socket off ([server] control_socket)\n";
            return 78;
        }
    }
    std::string request = "resume";
    if (!duration.empty()) {
        const auto d = config::parse_duration(duration);
        const auto seconds = d ? std::chrono::duration_cast<std::chrono::seconds>(*d).count() : 0;
        if (!d || seconds < 1 || seconds > 86400) {
            std::cerr << "pause: \"" << duration
                      << "\" is not a duration from 1s to 1d (like \"30s\", \"5m\", \"2h\")\n";
            return 78;
        }
        request = "pause " + std::to_string(seconds);
    }
    if (!group.empty()) {
        request += " " + group;
    }
    const std::string reply = control_request(path, request);
    const bool ok = reply.rfind("ok:", 0) == 0;
    (ok ? std::cout : std::cerr) << reply << "\n";
    return ok ? 0 : 1;
}

}  // namespace moat::app
