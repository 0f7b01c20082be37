"""Each form a secret is written in is redacted, and each look-alike seen redacted by mistake is
left alone (core.memories.secrets). Every value here is fake: random characters in a provider's
format, or a made-up password."""

from __future__ import annotations

import base64
import random
import string

import pytest

from agent_memory.core.memories.secrets import find_secrets, redact

_R = random.Random(2026)
AN = string.ascii_letters + string.digits
HEX = "0123456789abcdef"


def fake(n: int, alphabet: str = AN) -> str:
    while True:
        value = "".join(_R.choice(alphabet) for _ in range(n))
        if alphabet != AN or (any(c.isdigit() for c in value) and any(c.isupper() for c in value)
                              and any(c.islower() for c in value)):
            return value


def gone(text: str, *values: str) -> str:
    redacted = redact(text)[0]
    assert [v for v in values if v in redacted] == [], redacted
    return redacted


AKIA = "AKIA" + fake(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
AWS_SECRET = fake(38) + "+/"
GHP = "ghp_" + fake(36)
PEM_LINES = [fake(64, AN + "+/") for _ in range(4)]

FORMS = [
    # framework secret keys
    ("SECRET_KEY = 'django-insecure-7h#k2@q9z!m4x&v8w$r1t^y6u(p0o)i3e+l5n-b'",
     "django-insecure-7h#k2@q9z!m4x&v8w$r1t^y6u(p0o)i3e+l5n-b"),
    ("app.secret_key = b'5f1e9c2a7b3d8e4f0a6c1b9d2e7f3a8c'", "5f1e9c2a7b3d8e4f0a6c1b9d2e7f3a8c"),
    ("app.config['SECRET_KEY'] = \"Tq8ZrW2mLx5NcV7bKp3Hs9Jd\"", "Tq8ZrW2mLx5NcV7bKp3Hs9Jd"),
    ("production:\n  secret_key_base: " + (k := fake(128, HEX)), k),
    ("APP_KEY=base64:" + (k := base64.b64encode(bytes(range(32))).decode()), k),
    # cookies and session ids
    ("Cookie: sessionid=k2j9x8q7w6e5r4t3y2u1i0o9p8a7s6d5; django_language=en", "k2j9x8q7w6e5r4t3y2u1i0o9p8a7s6d5"),
    ("< Set-Cookie: connect.sid=s%3AQz7Wm2Lx9Rk4Tn8Vb3Hc6Jf1Dg5Sa0Pe.Xy7Kq2Mz9Lw4Rn8Tv3; Path=/; HttpOnly",
     "Qz7Wm2Lx9Rk4Tn8Vb3Hc6Jf1Dg5Sa0Pe"),
    ("the log shows JSESSIONID=8F3A1C9E7B5D2F4A6C8E0B1D3F5A7C9E reused", "8F3A1C9E7B5D2F4A6C8E0B1D3F5A7C9E"),
    ("curl -b 'PHPSESSID=a8k2m9q4z7x1c5v3b6n0p2l4j8' https://shop.example.org/cart", "a8k2m9q4z7x1c5v3b6n0p2l4j8"),
    ("why does PHPSESSID a8k2m9q4z7x1c5v3b6n0p2l4j8 keep logging me out?", "a8k2m9q4z7x1c5v3b6n0p2l4j8"),
    # passwords in prose
    ("ssh in as deploy, password hunter2! and look at the logs", "hunter2!"),
    ("my password is Sunflower-Rain-88 but do not store it", "Sunflower-Rain-88"),
    ("grafana admin\npw: Kettle&Drum42", "Kettle&Drum42"),
    ("the db pass is Gr4nite#Peak for now", "Gr4nite#Peak"),
    ("login is ops / Marble!Stone7", "Marble!Stone7"),
    ("creds: ci / Lantern$Fox3 (the old ones got revoked)", "Lantern$Fox3"),
    ("set the admin password to Quill9&Ink and restarted", "Quill9&Ink"),
    ("my password is correct-horse-battery-staple, please log in", "correct-horse-battery-staple"),
    ("The password for the pfx is Ember!Glow7.", "Ember!Glow7"),
    # passwords on command lines
    ("sshpass -p 'Cedar%Lake61' ssh deploy@10.0.4.12 uptime", "Cedar%Lake61"),
    ("redis-cli -h cache -a Orchid!Sky22 ping", "Orchid!Sky22"),
    ("curl -u admin:Harbor#Mist9 https://nexus.example.org/service/rest", "Harbor#Mist9"),
    ('curl --user "ci:Pebble!Moon5" -X POST https://ci.example.org/job/build', "Pebble!Moon5"),
    ("mysql -h db -uroot -pBasalt#Vale3 shop < dump.sql", "Basalt#Vale3"),
    ("PGPASSWORD=Willow$Creek8 psql -h db -U app orders", "Willow$Creek8"),
    ("docker login -u bot -p Falcon!Dusk4 registry.example.org", "Falcon!Dusk4"),
    ("htpasswd -b -c /etc/nginx/.htpasswd admin Copper&Fern6", "Copper&Fern6"),
    ("echo 'Meadow#Run2' | sudo -S apt update", "Meadow#Run2"),
    ("openssl pkcs12 -export -in c.pem -out b.pfx -passout pass:Ember!Glow7", "Ember!Glow7"),
    ("smbclient //nas/backups -U ops%Tundra$Wolf1 -c ls", "Tundra$Wolf1"),
    ("helm repo add internal https://charts.example.org --username ci --password Aspen@Trail4", "Aspen@Trail4"),
    # dotfiles
    ("$ cat ~/.pgpass\ndb.internal:5432:orders:app:Prairie!Wind3", "Prairie!Wind3"),
    ("machine api.heroku.com\n  login dana@example.org\n  password " + (k := fake(40, HEX)), k),
    ("_auth=" + (k := base64.b64encode(b"ci:Lagoon#Reef5").decode()) + "\nalways-auth=true", k),
    ("//npm.example.org/:_authToken=" + (k := f"{fake(8, HEX)}-{fake(4, HEX)}-{fake(4, HEX)}-{fake(12, HEX)}"), k),
    ('{"auths": {"ghcr.io": {"auth": "' + (k := base64.b64encode(f"bob:{GHP}".encode()).decode()) + '"}}}', k),
    (f"https://bob:{GHP}@github.com", GHP),
    ("[pypi]\nusername = __token__\npassword = " + (k := "pypi-AgEIcHlwaS5vcmc" + fake(60)), k),
    ("<server>\n  <id>nexus</id>\n  <password>Cobble!Path8</password>\n</server>", "Cobble!Path8"),
    ("[client]\nuser=root\npassword=Thistle#Bay2", "Thistle#Bay2"),
    # an AWS secret key beside its key id
    (f"new IAM user for the backups: {AKIA} / {AWS_SECRET}", AWS_SECRET),
    (f"Access key ID,Secret access key\n{AKIA},{AWS_SECRET}", AWS_SECRET),
    (f"AWS Access Key ID [None]: {AKIA}\nAWS Secret Access Key [None]: {AWS_SECRET}", AWS_SECRET),
    # wrapped across lines
    ("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_LINES) + "\n(only the start, the rest is in the vault)",
     *PEM_LINES),
    ('{"private_key": "-----BEGIN PRIVATE KEY-----\\n' + "\\n".join(PEM_LINES) + '\\n-----END PRIVATE KEY-----\\n"}',
     *PEM_LINES),
    (f"the terminal wrapped it:\n{GHP[:22]}\n{GHP[22:]}", GHP[:22], GHP[22:]),
    ('export API_TOKEN="' + (k := fake(40)) + '\\\n' + (k2 := fake(24)) + '"', k, k2),
    # values that hold a word, and are passwords all the same
    ('password: "Yourpass(2024)!"', "Yourpass(2024)!"),
    ("DB_PASSWORD=example-Gr8t-pw", "example-Gr8t-pw"),
    ('{"password": "insertCoin#77"}', "insertCoin#77"),
    # provider formats
    ("key " + (k := "sk-proj-" + fake(58) + "T3BlbkFJ" + fake(58)) + " works in curl", k),
    ("using " + (k := "sk-ant-api03-" + fake(93, AN + "_-") + "AA") + " for the eval", k),
    ("admin key " + (k := "sk-ant-admin01-" + fake(93, AN + "_-") + "AA"), k),
    ("fine-grained " + (k := "github_pat_" + fake(22) + "_" + fake(59)) + " expires soon", k),
    ("Private-Token: " + (k := "glpat-" + fake(20)), k),
    ("refresh " + (k := "xoxe-1-" + fake(146, string.ascii_uppercase + string.digits)), k),
    ("restricted " + (k := "rk_live_" + fake(40)), k),
    ("X-Shopify-Access-Token: " + (k := "shpat_" + fake(32, HEX)), k),
    ("use " + (k := "lin_api_" + fake(40)) + " for the sync", k),
    ("notion " + (k := "secret_" + fake(43)), k),
    ("integration " + (k := "ntn_" + fake(11, string.digits) + fake(35)), k),
    ("supabase login --token " + (k := "sbp_" + fake(40, HEX)), k),
    ("DOPPLER_TOKEN=" + (k := "dp.st.prd." + fake(43)), k),
    ("databricks token " + (k := "dapi" + fake(32, HEX)), k),
    ("postman " + (k := "PMAK-" + fake(24, HEX) + "-" + fake(34, HEX)), k),
    ("grafana " + (k := "glsa_" + fake(32) + "_" + fake(8, HEX)), k),
    ("cloud " + (k := "glc_" + fake(80, AN + "+/")), k),
    ("the user key " + (k := "NRAK-" + fake(27, string.ascii_uppercase + string.digits)), k),
    ("sentry-cli --auth-token " + (k := "sntryu_" + fake(64, HEX)), k),
    ("heroku " + (k := "HRKU-AA" + fake(58)), k),
    ("pscale " + (k := "pscale_tkn_" + fake(43)), k),
    ("export VAULT_TOKEN=" + (k := "hvs." + fake(90)), k),
    ("twilio api key sid " + (k := "SK" + fake(32, HEX)), k),
    ("mailgun: " + (k := "key-" + fake(32, HEX)), k),
    ("# public key: age1qqq\n" + (k := "AGE-SECRET-KEY-1" + fake(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")), k),
    ("DefaultEndpointsProtocol=https;AccountName=logs;AccountKey=" + (k := base64.b64encode(bytes(range(64))).decode())
     + ";EndpointSuffix=core.windows.net", k),
    ('{"type": "service_account", "private_key_id": "' + (k := fake(40, HEX)) + '"}', k),
    ("Authorization: Bearer " + (k := fake(40)), k),
    ("CLOUDFLARE_API_TOKEN=" + (k := fake(40, AN + "_-")), k),
    # formats and places a second, blind corpus showed missing
    ('"token": "' + (k := fake(14) + ".atlasv1." + fake(67, AN + "_-")) + '"', k),
    ('client.run("' + (k := base64.b64encode(b"112233445566778899").decode().rstrip("=") + "." + fake(6) + "."
                     + fake(38, AN + "_-")) + '")', k),
    ("Mailgun::create('" + (k := fake(32, HEX) + "-" + fake(8, HEX) + "-" + fake(8, HEX)) + "')", k),
    ("curl https://api.telegram.org/bot" + (k := "7012345678:AA" + fake(33, AN + "_-")) + "/getMe", k),
    ('client = Client("AC' + fake(32, HEX) + '", "' + (k := fake(32, HEX)) + '")', k),
    ("curl -u AC" + fake(32, HEX) + ":" + (k := fake(32, HEX)) + " https://api.twilio.com/", k),
    ('dsn="https://' + (k := fake(32, HEX)) + '@o4504.ingest.us.sentry.io/4508"', k),
    ('dsn := "app:Fjord7!x@tcp(db.internal:3306)/shop"', "Fjord7!x"),
    ('proxy_set_header Authorization "Basic ' + (k := base64.b64encode(b"bot:" + fake(16).encode()).decode())
     + '";', k),
    ("twine upload -u __token__ -p " + (k := "pypi-AgEIcHlwaS5vcmc" + fake(80, AN + "_-")) + " dist/*", k),
    ("keytool -genkey -keystore a.jks -storepass Fern4_x -keypass Fern4_x", "Fern4_x"),
    ("GET /f.csv?X-Amz-Credential=x&X-Amz-SignedHeaders=host&X-Amz-Signature=" + (k := fake(64, HEX)), k),
    ('-H "DD-APPLICATION-KEY: ' + (k := fake(40, HEX)) + '"', k),
    ("define( 'DB_PASSWORD', 'k3*Vq?z!9Lm' );", "k3*Vq?z!9Lm"),
    ('{"password": "Harbor(Sample)31"}', "Harbor(Sample)31"),
    ("DB_PASSWORD=PressStart(7)Otter", "PressStart(7)Otter"),
    ("data:\n  password: " + (k := base64.b64encode(b"Zq8+Lm2/Wx4=Rt").decode()), k),
    ("redis: NOAUTH. opts=&{Addr:10.0.0.1:6379 Username: Password:Vk2m=!xQ7 DB:0}", "Vk2m=!xQ7"),
    ("my netflix password is literally Sunbeam77, don't judge", "Sunbeam77"),
    ("new guest password for the upstairs meeting room tv: yak(otter)19-", "yak(otter)19-"),
    ("use otter-lynx-heron-19 to log in to the admin panel", "otter-lynx-heron-19"),
    ("what's the jenkins admin pw again?\n[09:12] Sam: maple42", "maple42"),
    ("app.use(session({ secret: 'OtterBadger7!', resave: false }))", "OtterBadger7!"),
    ("login for the qa environment is qa@acme.dev / Token(12)Otter", "Token(12)Otter"),
    ("> new key:\n> " + (k := "sk-ant-api03-" + fake(40, AN + "_-")) + "\n> " + (k2 := fake(54, AN + "_-"))
     + "\nthanks", k, k2),
]


@pytest.mark.parametrize(("text", "values"), [(text, values) for text, *values in FORMS],
                         ids=[f"{n}:{text[:30]}" for n, (text, *_) in enumerate(FORMS)])
def test_each_form_is_redacted(text: str, values: list[str]) -> None:
    gone(text, *values)


TRAPS = [
    "Deploy to AWS account 123456789012 in eu-west-1.",
    "Attach arn:aws:iam::123456789012:role/deploy-secret-reader to the runner.",
    "aws secretsmanager get-secret-value --secret-id "
    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-password-AbC12d",
    "mapboxgl.accessToken = 'pk.eyJ1IjoiYWNtZSIsImEiOiJjbTBxcHV6d3gwMXB4In0.a8Kd3LmN0pQr5StUvWx7Yz';",
    "MAPBOX_ACCESS_TOKEN=pk.eyJ1IjoiYWNtZSIsImEiOiJjbTBxcHV6d3gwMXB4In0.a8Kd3LmN0pQr5StUvWx7Yz",
    "SELECT id FROM users WHERE email = :email AND password = :password",
    'cur.execute("UPDATE users SET password = %(password)s WHERE id = %(id)s", params)',
    'cmd.Parameters.AddWithValue("@password", hashed); -- WHERE password = @password',
    "psql --password mydb",
    "psql -h db.internal -U app --password orders",
    "pg_dump -U postgres --password --format=custom analytics > analytics.dump",
    "mysql -u root -p shop   # it asks for the password",
    "auth:\n  existingSecret: db-credentials\n  secretKeys:\n    adminPasswordKey: postgres-password",
    "--set auth.existingSecret=keycloak-admin --set auth.passwordSecretKey=admin-password",
    "password: ${DB_PASSWORD}",
    'token = os.environ["TOKEN"]',
    "echo \"$CR_PAT\" | docker login ghcr.io -u dana --password-stdin",
    "password_reset_url: https://app.example.org/reset",
    "response = client.messages.create(model=m, max_tokens=4096, messages=msgs)",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "Order ad636b60-eca7-4634-935d-e9de3418b080 failed; ULID 01HZX3YM5WM7TZRGGA0BRZYDKY",
    "secret_key_ref:\n  name: stripe-keys\n  key: secret-key",
    "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db-credentials\n      key: password",
    "export GITHUB_TOKEN=<your-token>",
    "ADMIN_PASSWORD=changeme",
    "API_KEY=xxxx-xxxx-xxxx",
    "password: ********",
    "Authorization: Bearer ***",
    "password=REDACTED token=REDACTED",
    "OPENAI_API_KEY=sk-...",
    "DB_PASSWORD=your_password_here",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "stripe_key: sk_live_XXXXXXXXXXXXXXXXXXXXXXXX",
    "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    "password = getpass.getpass('Password: ')",
    "Cookie: theme=dark; lang=en-US; _ga=GA1.1.1234567890.1700000000",
    "password hashing uses argon2id, tokens are opaque random strings",
    "PASS  src/auth/login.test.ts (4.21 s)\nTests: 42 passed, 42 total",
    "pass: 412 fail: 3 skip: 7",
    "each line of ~/.pgpass is hostname:port:database:username:password",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq7Zr2mS9pL4kX8vB1nC6dF0gH3jK5mN7qR9tW2yE4u dana@laptop",
    "NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=pk_live_51HqLy2Ka8mN3pQ4rS5tU6vW7xY8zA9bC0dE1fG2hI3jK4lM5",
    "token: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  623133653966623430613934643361633837643737646136336536343062",
    "kubectl create secret generic db --from-file=password=./secrets/db-password.txt",
    "POSTGRES_PASSWORD_FILE=/run/secrets/postgres_password",
    "Set-Cookie: consent=accepted; Path=/; Max-Age=31536000",
    # code seen in libraries: variables, types, formats, patterns, calls
    "self.proxy_password = proxy_password",
    "def load(self, password: _PasswordType | None = None) -> None:",
    "_request_auth: Optional[Dict[StrictStr, Any]] = None,",
    "user_pass = '%s:%s' % (unquote(user), unquote(password))",
    'HUGGINGFACE_HEADER_X_XET_ACCESS_TOKEN = "X-Xet-Access-Token"',
    "fds_to_pass = [listener.fileno(), alive_r]",
    'tok = re.findall("token=([a-z0-9]+)", url)[0]',
    "the size may exceed 2 GiB, pass force_zip64 to use the 64-bit format",
    'WWW-Authenticate: Bearer resource_metadata="https://example.org/.well-known/oauth-protected-resource"',
    'proxy_url="socks5h://<username>:<password>@proxy-host"',
    "vcruntime = glob.glob(vcredist, recursive=True)[-1]",
    "return method, timeout, metadata, credentials, wait_for_ready, compression",
    "self._session = httpx.Client(timeout=None, limits=limits)",
    'password = enforce_bytes(auth[1], name="auth")',
    "get_password = (lambda: password)",
    # look-alikes of the forms above
    "use 1Password to log in",
    "what's the password policy?\nalice: 12chars",
    "the trace id is 4bf92f3577b34da6a3ce929d0e0e4736 for account AC303ac185aa9c2e6ca68d9e26898a3b91",
    "Twilio message SMd32958a37ff8cad3eb215bbff83111dc delivered, account=AC303ac185aa9c2e6ca68d9e26898a3b91",
    't("password", "Kennwort")',
    "git clone https://x-oauth-basic@github.com/acme/app.git",
    'proxy_set_header Authorization "Bearer $token";',
    "Cookie: csrftoken=" + fake(32) + "; theme=dark",
    '{"XSRF-TOKEN": "' + fake(32) + '"}',
    "password: ${DATABASE_PASSWORD:?missing}",
    "ssh -o '' -p 2222 deploy@host",  # an empty word before an option (it once raised)
]


@pytest.mark.parametrize("text", TRAPS, ids=[t[:40] for t in TRAPS])
def test_a_look_alike_is_left_alone(text: str) -> None:
    assert find_secrets(text) == []


def test_a_hash_beside_a_key_id_is_not_its_secret_key() -> None:
    text = f"key {AKIA} was rotated in commit 3b18e512dba79e4c8300dd08aeb37f8e728b8dad"
    assert redact(text)[0] == ("key [REDACTED:aws_access_key] was rotated in commit "
                               "3b18e512dba79e4c8300dd08aeb37f8e728b8dad")


def test_a_value_that_is_a_placeholder_only_when_it_is_one() -> None:
    assert find_secrets("password: <password>") == [] and find_secrets("password: Yourpass(2024)!") != []
    assert find_secrets("api_key: YOUR_API_KEY") == [] and find_secrets("api_key: your-Key-9f8e7d6c5b4a3928") != []


def test_a_key_beside_its_own_secret_is_the_public_half() -> None:
    """Shopify's, Cloudinary's, Pusher's `api_key` beside `api_secret`: the key is the pair's id."""
    key, secret = fake(32, HEX), "shpss_" + fake(32, HEX)
    text = f'ShopifyAPI::Context.setup(\n  api_key: "{key}",\n  api_secret_key: "{secret}",\n)'
    redacted = gone(text, secret)
    assert key in redacted
    assert key not in redact(f'api_key: "{key}"')[0]  # alone, a key is a secret
