#include <alsa/asoundlib.h>

/// alsa-lib prints its own diagnostics to stderr ("ALSA lib pcm.c:…"); Prism reports each failure as one
/// line of its own, so the library's printing is switched off. (The handler type is variadic, which Swift
/// cannot define.)
static inline void prism_alsa_quiet_handler(const char *file, int line, const char *function, int err,
                                            const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void prism_alsa_silence_errors(void) {
    snd_lib_error_set_handler(prism_alsa_quiet_handler);
}
