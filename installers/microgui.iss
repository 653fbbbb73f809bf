; Inno Setup script: Windows installer for the one-folder app that installers/microgui.spec builds.
;
;   pyinstaller --noconfirm installers\microgui.spec
;   iscc installers\microgui.iss            (Inno Setup 6)
;
; Output: dist\microgui-setup-<version>.exe. Installs per user by default (no administrator rights
; needed on an office computer); "Install for all users" is offered when run as administrator.

#define AppName "microgui"
; = microgui/_version.py (checked by tests/distribution/test_metadata.py)
#define AppVersion "0.2.0"
#define AppPublisher "microgui developers"
#define AppExe "microgui.exe"

[Setup]
AppId={{6A1E3C52-6E0B-4F0B-9E58-0C7D3B6A4F21}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher={#AppPublisher}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputDir=..\dist
OutputBaseFilename=microgui-setup-{#AppVersion}
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
ArchitecturesInstallIn64BitMode=x64compatible
UninstallDisplayIcon={app}\{#AppExe}
; Sign the installer and the uninstaller when a certificate is configured (see README.md):
; SignTool=signtool sign /fd SHA256 /tr http://timestamp.example /td SHA256 /a $f

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked
Name: "csvassoc"; Description: "Offer microgui in ""Open with"" for CSV files"; Flags: unchecked

[Files]
Source: "..\dist\microgui\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{group}\{#AppName} (demo data)"; Filename: "{app}\{#AppExe}"; Parameters: "--demo"
Name: "{group}\Uninstall {#AppName}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Registry]
Root: HKA; Subkey: "Software\Classes\.csv\OpenWithProgids"; ValueType: string; ValueName: "microgui.csv"; ValueData: ""; Flags: uninsdeletevalue; Tasks: csvassoc
Root: HKA; Subkey: "Software\Classes\microgui.csv"; ValueType: string; ValueName: ""; ValueData: "CSV table (microgui)"; Flags: uninsdeletekey; Tasks: csvassoc
Root: HKA; Subkey: "Software\Classes\microgui.csv\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#AppExe}"" ""%1"""; Tasks: csvassoc

[Run]
Filename: "{app}\{#AppExe}"; Parameters: "--demo"; Description: "Start {#AppName} on its demo data"; Flags: nowait postinstall skipifsilent
