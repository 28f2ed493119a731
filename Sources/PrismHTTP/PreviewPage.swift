import Foundation
import PrismCore

/// `prism dev`'s page, `Resources/preview.html`: one HTML document with its CSS and JavaScript inline, no
/// external assets, shipped in this module's resource bundle (`Prism_PrismHTTP.resources` beside the binary).
///
/// It shows the MJPEG stream (output or input), builds controls from `/state`'s parameters (sliders
/// with their ranges, colour pickers, checkboxes, dropdowns), overlays the current compile error with
/// its line, and shows fps and per-pass GPU times. Snapshot downloads `/snapshot`; record toggles
/// `/record` with a running timer. With a camera input a Camera dropdown lists `/state`'s cameras and
/// posts the choice to `/camera` (the switch happens between frames; the page shows it pending until then).
/// Pressing and dragging on the output posts the pointer to `/mouse` (ShaderToy's `iMouse`), one request
/// in flight at a time: moves coalesce to the newest, presses and releases are always sent.
///
/// With `?selftest=stream`, `?selftest=error` or `?selftest=mouse` in the URL the page tests itself and reports
/// the result in `#selftest` (and to `/selftest` when the server allows it): whether the stream shows a
/// non-blank picture, whether moving the first slider changes it, whether the error overlay is up and its
/// text, whether pressing and dragging on the picture changes it (a shader reading `iMouse`).
package enum PreviewPage {
    /// The document's bytes; throws when this installation lacks them.
    package static func html() throws -> [UInt8] {
        guard let loaded else { throw MissingResource() }
        return loaded
    }

    /// Read once.
    private static let loaded: [UInt8]? = Bundle.module.url(forResource: "preview", withExtension: "html")
        .flatMap { FileManager.default.contents(atPath: $0.path) }.map { [UInt8]($0) }

    /// The page is not in the module's bundle: a packaging fault, said in one line.
    package struct MissingResource: PrismError {
        package var description: String {
            "the preview page (preview.html) is missing from the PrismHTTP resources installed beside prism"
        }
    }
}
