"""The output directory a render writes: DIR/<device>/<file> plus DIR/.netgen-render, the
authenticated manifest of what netgen wrote; built beside DIR and swapped in whole, and replacing
only a DIR that holds nothing netgen did not write.

DIR may be replaced only when it is new, empty, or an earlier render that holds nothing but the
files its manifest lists, unchanged. Nothing is followed through a symbolic link: a link as DIR, as
the marker or anywhere inside DIR is refused.

Its modules, each importing only those before it: manifest_mac.py (the key that authenticates
manifests, and their MAC), manifest.py (the manifest's format), inspection.py (what DIR holds and
whether it may be replaced), files.py (a device's files written into the staging directory, the
directories beside DIR, links, removing a tree), lookahead.py (DIR's first look, taken by a forked
child while the fabric is expanded), staging.py (the new DIR built beside the old one and swapped
in). None of them knows a plugin or a fabric: the render (netgen/platforms/render.py) decides what
goes in, and netgen/platforms/output_dir.py reads a render directory back.
"""
