package fakegooglechat

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"sync"
)

// Test identities of events/googlechat (see its README). They
// authenticate nothing real.
const (
	ProjectNumber = "123456789012"
	// ClientEmail is the test service account the app sends as.
	ClientEmail = "parley-chat@parley-test.iam.gserviceaccount.com"
	// KeyID is its key's id.
	KeyID = "0f1e2d3c4b5a69788796a5b4c3d2e1f000000001"
	// ChatKeyID is the kid of the fake Chat issuer's first key.
	ChatKeyID = "parley-googlechat-test-key-1"
)

// serviceAccountPEM is the test service account's private key.
const serviceAccountPEM = `-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCuwspO7C9ByT2z
r+44Zdd5BUI7FOZpH1o4cfRWJyoBs0jpBjqTJvuZjtiP1rqDIRhbo2ZCp78h9otj
DPSHTpAKmKuaqO1nNHbMuvulmhVmh4o94LBX02sVQb7sKsVNU8wmd/FX7Q4tg5KN
CIkW4K91NoBkHe5doKEaiJ/csnWJOdpiGeCPPQXrdKTpAGX2I8NgWy9duqDRw8jh
RiXnOqc8D1Zac+ncY02TqWm7NM1EBMHX0zXm2ZumwluFTiiGG0HVLOQrmk2dVFoI
fNjHqNQHgEbycOfglHUU0yHusMPoTSNvPyihSCJDAJV5zr1xVT9EfnRfTqtG/Qgo
2G6K3aabAgMBAAECggEAGg22MB/r8lMjHL0MtwxlHDNZgAoJ86rAk4usO9p+MQoJ
GPGxx9WsSrn4tTDzq1rtZl6s1HZs+zjl54Vl6x9zlUYqHIDfVl8u8C9WwYXVd5dG
AnA95J9YkS8KXJZfxbsew1lm+eRrFFlPftvCkaOQ5NjpjoNxJt+B770QlXa8KRHf
QzkhblzinGjQ31ZDSPG6kDjjuL/6sg7XVML90dFsQY36Pw15KzBNL+HkbV9asFBf
ISEMHSqM7QCVBM/JDs9rTsdHWo6wJ6fawDjHi/ytgNaUKzIyFQ6fvH9iTTvSlLSp
P6brb614pkRqV2HleokF94ML6hZo7gpyrpQMxXdskQKBgQDnOYCCORxtLZJYcMfu
8dnKIBR0kkdQGYWFYIlAQZiVsP06WyDGY564Xsdhl47gkg4pHFVVZfswAfUZ1SsN
BuYhqtVoxSgerinutmA0qsjdy3ijsfW6WNTurH6fmukNhGGjGw3k6OuWlOohbXGF
8L7SRn177ZgUAxhsVk9IKEFQqQKBgQDBfHyiXFrlca2VBK9ISOt1lGpvdyHcHLRG
ZT5n6OL8X3BNG3++4h8ikauIYZhH1Wdo6OdJ/q5YuGelRUhg48iag4Rlqm4GWPEm
IylxPC4ZoxRIw/7pvVsd1UYe779MPemLzAssb/Wvtt0U6jwF1rDgWnF6euSQ17se
/xpt+OzTowKBgBRz5KcgMCCEKG7EQxsir3YOkmChU8eFCmd624kghEOxbSTNTL/f
rfl3AMHkKxI4OSJvzCiKpcZgVfLcBTvYwWB3APuMfPkBxNnFrgralHvx9JDeO/Mo
ymT2QxkRFc5JSG2qBfealsQyFeexC5qiae6lp5HfuVUD1RQ4KjkivmxJAoGARJLV
LUnkIStv5L+bS9gkMzDdpBGp23QE5Gofev5L7Dv69ikH1mQXus276IMGUHcuxjy9
NDliGymH+kgaxdQVFcYE129WvUMqfGS73FkC0a09lCh6oOauc11SE8bOmrvamORB
FYe8oIEDy9TUXxFe8LS9QTZq6Xa759lryYwOi1cCgYEA5pVvs9jjEbDQaHmgPKuX
9ICX9yh5BkAilyU5n+SrBTT69KcbGrUxOHyCG7ozmn8gcim4dZWQx7Yt74/h16FP
stnd2wBXsHtaskJXuW+9RRH5cz4ZxxWX1pmZxd8SKbJLZzBaRKjPdJQMQNnqYCuk
YSqrakB6iCUm7gJEh9TVBUQ=
-----END PRIVATE KEY-----
`

// ServiceAccountKey is the test service account's private key.
var ServiceAccountKey = sync.OnceValue(func() *rsa.PrivateKey {
	b, _ := pem.Decode([]byte(serviceAccountPEM))
	if b == nil {
		panic("fakegooglechat: the test key does not decode")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		panic("fakegooglechat: the test key does not parse: " + err.Error())
	}
	return k.(*rsa.PrivateKey)
})

// ServiceAccountJSON is the test service account's key file, as the Cloud
// console downloads it, with tokenURI as its token_uri.
func ServiceAccountJSON(tokenURI string) string {
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "parley-test", "private_key_id": KeyID,
		"private_key": serviceAccountPEM, "client_email": ClientEmail, "client_id": "100000000000000000001",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": tokenURI,
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"universe_domain":             "googleapis.com",
	})
	return string(b)
}

// chatIssuerPEM is the fake Chat service account issuer's first signing
// key: a test key, fixed so that make post signs what the running fake
// verifies.
const chatIssuerPEM = `-----BEGIN PRIVATE KEY-----
MIIEugIBADANBgkqhkiG9w0BAQEFAASCBKQwggSgAgEAAoIBAQC1j4XaRJfQLtfU
fSRovfncB+LYn0wd+ldWsqhh/Pmjrbo0Xqc3fT04drMzENyXpnorKlkTZLlM2Y1x
zlmtGqFHiKqydtkO7ImJE5s78zfA4v1s9wGfOkDsSj4cfSLmMdDdpHS9gMCxrOTR
sym8eK/pvS6yPZ7cD7Wx2PeH5Ww5qc6d/8AAvjtfZzn5mfnM/tQvSSvbLT3dLwyH
NhGzGo3D/8Cj+J046XOnyHdJr4fJ9jT6U44cC6uXasWzxWUFAaSHwEpxhbzpSIOZ
SdZMgaY6Pq7Pb8pmnEZteCWEbMc1pgRJovlxZalEm97McLkjJssLF2WQDwCVyGfu
Ac8dZY15AgMBAAECgf8XDKFxlEOxqkC8OSbmJTgTNu0VkyOWqrFr0EKQLg2DOgrp
mxqfcMbU5DzbvshCeGAKGtY0IBVmLDhIummoEDlpW3BQN8ZWnrDXNiX+9mGdmzOR
IcqS7FJRrRs1gq1ri+d4O+iWJkJQTCLAfH5P7wJmKh5Dgo8oYNYwPdsu5XFX4IAA
KGFSNnTClxbo5uuclDOQsuigVyPYzCopIvLS8BeAjmnhPqlYiyC1qQQCfTRXjfD/
9yRotdjMSCb82Nf6AKVkDBUhUE4BXY/lAqkEkZHQ5CTyqu6B3g5Q9Hy5M1IL+HIy
nKe9Wa3VB5kK2vl7nAaLfurp3uS6UIhuuUmWQKkCgYEA5ei0ESB5ltW0Q6LIStNh
A9XRLxUL7ZN1OHDKo+ppWmk1KAuZaM2BvBOadk3mPgBaGMev1xyZcOOJWCbUkxDK
uJx/kV+M+0xwxrS8UrT1eKcUGkt+OazcArAg77K31ynLxxAXSH8R0T8wo+RkuIVz
BctTBbnj4Q/+K8R11VlO1F0CgYEAyio0/c/IXdwKywQtmyzSfIGjhA7/tTaGiZYE
KyQr9M/HUjSptay+kiOiYhtBsYSd0PBrdQh8B2/pslHedNH64PGbhHkwaHQeGV4S
/XY8uFR1uTqX7d7HpMExX7yJRL66ya8+FJPCwuREZalmdBsSOi/YXJzCTgIulMzw
pJxji80CgYAg8cJzvdKOgZruIjJPPpDlSstJ0ts9tOaUKt1utZVZJkA+t8LI2MHh
YHG+yBTZB5XhfSO+UFPQcFpq7k2BsWNLJunEvAtoqyBx6M4fj9yo6FAiIHU68IEq
RXDCyDo9s7iGktCzS7oS4Noocf7Yzg6YYvVHmcaEppUGUoWMB9sa5QKBgGyo/OyC
9uYD9EUkTML/9252W4YKbcRftzZSTJFHkty1pSN5LNJ6M7/mqUvj7I5WgmCgKJGx
6sAwlcKDoHbXuemX0wgD/1HVP6xQ1RIosAA/XTse1DRFLrdOI5SaiIlLnqfyqgJz
XRZVjLG7uFalikl+F+PHWeSF5bWS5bEEYbjtAoGAa82914r33CWQSG6+UPk4b8LO
JJruBaOHLpxM3amA+MOxcfEIPx0FpZ8lzGkRTVSgJmBVuewJNwFvDjiP3fbQ+t9A
1ytbf60+HBYWMQ5IIy3HClZ3B9ixVUcHvh1PavbZ8asu6yr5NGhb0Vvj82gs9T0y
NX6owO/wTtVubLBOw6U=
-----END PRIVATE KEY-----
`

var chatKey = sync.OnceValue(func() *rsa.PrivateKey {
	b, _ := pem.Decode([]byte(chatIssuerPEM))
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		panic("fakegooglechat: the issuer's test key does not parse: " + err.Error())
	}
	return k.(*rsa.PrivateKey)
})
