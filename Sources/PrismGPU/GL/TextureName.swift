import CGLES

extension Texture {
    /// The texture's GL name, for a program that draws with it itself (on its context's thread, while the
    /// texture lives: `Session.textures()` hands frames out this way).
    public var glName: GLuint { name }
}
