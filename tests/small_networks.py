"""One small network per family, shared by the tests that sweep every family."""

SMALL = {
    "ring": "ring:6", "path": "path:5", "mesh": "mesh:4x4", "torus": "torus:4x3", "hypercube": "hypercube:3",
    "complete": "complete:5", "product": "product:ring:3*ring:4", "ccc": "ccc:3", "ej": "ej:a=1,b=2,n=2",
    "hdn": "hdn:base=Q2,k=1,s=1", "rdn": "rdn:base=Q1,k=2", "dualcube": "dualcube:3", "galaxy": "galaxy:n=3,q=3",
    "galaxyfly": "galaxyfly:n=3,q=3,a=2", "dragonfly": "dragonfly:g=3,a=2", "gft": "gft:h=2,m=2,w=2",
    "butterfly": "butterfly:n=3,d=2", "omega": "omega:n=3,d=2", "baseline": "baseline:n=3,d=2",
    "benes": "benes:n=3,d=2", "butterfly-butterfly": "butterfly-butterfly:n=3", "clos": "clos:n=2,m=3,r=4",
    "polarfly": "polarfly:q=3", "slimfly": "slimfly:q=3", "hyperx": "hyperx:3x2,t=1x2",
    "dragonfly-plus": "dragonfly-plus:l=2,s=2,h=1,g=3", "fattree": "fattree:k=2,n=3", "jellyfish": "jellyfish:n=12,d=3",
    "kautz": "kautz:d=2,n=2", "debruijn": "debruijn:d=2,n=3",
}
