import CFaceDetect

extension CascadeFaceDetector {
    /// The OpenCV library's version as loaded at run time (`prism --version`).
    public static var openCVVersion: String { String(cString: prism_face_detector_opencv_version()) }
}
